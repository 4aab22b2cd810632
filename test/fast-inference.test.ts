import type { Tracer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FineTuneFake, startFineTuneFake } from "./fakes/FineTuneFake.ts"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { aCandidate, apiToken, malformedIds, servingLeaderboard, type SignedIn, signedIn } from "./support/Builders.ts"
import { deployedModel, lastUser, referenceOf } from "./support/Models.ts"
import { type Podium, type Reply, request, startPodium } from "./support/Podium.ts"
import { serverSpans } from "./support/Spans.ts"
import { freshDatabaseUrl } from "./support/database.ts"

// Leaderboard and model inference are answered at the server's front door (FastInference), before
// the HttpApi router. Two instances on one database, one with the front door and one without,
// get the same requests: every answer must be the same, hostile and refused ones included.

const fineTuneKey = "sk-ft-7c1e9a3f5d24"
let upstream: OpenAiFake
let tuner: FineTuneFake
let front: Podium
let router: Podium
let owner: SignedIn
let leaderboardToken: string
let modelToken: string
let wrongScope: string
let leaderboardId: string
let modelId: string
let versionId: string
const frontSpans: Array<Tracer.Span> = []

beforeAll(async () => {
  upstream = await startOpenAiFake()
  tuner = await startFineTuneFake({ apiKey: fineTuneKey })
  tuner.answer = (model, messages) => model.startsWith("ft:") ? `tuned: ${referenceOf(lastUser(messages))}` : "no idea"
  const env = {
    DATABASE_URL: await freshDatabaseUrl(),
    FINE_TUNE_BASE_URL: tuner.baseUrl,
    FINE_TUNE_API_KEY: fineTuneKey,
    FINE_TUNE_BASE_MODELS: "base-model",
    FINE_TUNE_POLL_INTERVAL_MS: "50"
  }
  front = await startPodium(env, { tracing: serverSpans(frontSpans) })
  router = await startPodium(env, { fastInference: false })
  owner = await signedIn(front, "front-door-owner")
  leaderboardToken = await apiToken(owner.api, ["leaderboards:inference"])
  modelToken = await apiToken(owner.api, ["models:inference"])
  wrongScope = await apiToken(owner.api, ["leaderboards:read"])
  leaderboardId = (await servingLeaderboard(owner.api, aCandidate(`${upstream.url}/v1`))).id
  ;({ modelId, versionId } = await deployedModel(front, owner, "openai"))
}, 120_000)
afterAll(async () => {
  await front?.stop()
  await router?.stop()
  await upstream?.close()
  await tuner?.close()
})

const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi

/** What must be the same: status, body and the headers a client reads. */
const comparable = (reply: Reply) => ({
  status: reply.status,
  // fresh ids and the clock aside: the fine-tuning fake numbers its completions and stamps them in seconds
  body: reply.text.replace(uuid, "<id>").replace(/chatcmpl-\d+/g, "chatcmpl-<n>").replace(/"created":\d+/g, '"created":<t>'),
  headers: Object.fromEntries(
    [...reply.headers].filter(([name]) =>
      ["content-type", "content-length", "www-authenticate", "retry-after", "allow", "x-request-id"].includes(name) ||
      name.startsWith("x-service-")
    ).map(([name, value]) => [name, name.startsWith("x-service-") || name === "x-request-id" && value !== "caller-id-1" ? value.replace(uuid, "<id>") : value])
  )
})

interface Sent {
  readonly path: string
  readonly token?: string | undefined
  readonly body?: string | undefined
  readonly headers?: Record<string, string> | undefined
}

const both = async ({ body, headers, path, token }: Sent) => {
  const options = { token, body, headers: { "content-type": "application/json", ...headers } }
  const [a, b] = [await request(front.url, "POST", path, options), await request(router.url, "POST", path, options)]
  return [comparable(a), comparable(b)] as const
}

const question = JSON.stringify({ messages: [{ role: "user", content: "q7" }] })

describe("the front door answers inference as the router does", () => {
  const paths = () => [
    `/v1/leaderboard/${leaderboardId}/inference`,
    `/v1/leaderboard/${leaderboardId}/chat/completions`,
    `/v1/models/${modelId}/inference`,
    `/api/models/${modelId}/inference`,
    `/v1/models/${modelId}/chat/completions`,
    `/v1/models/${modelId}/versions/${versionId}/inference`,
    `/api/models/${modelId}/versions/${versionId}/inference`
  ]
  const tokenFor = (path: string) => path.includes("/leaderboard/") ? leaderboardToken : modelToken

  it("serves every inference path with the same body and headers, and through the front door", async () => {
    frontSpans.length = 0
    for (const path of paths()) {
      const [a, b] = await both({ path, token: tokenFor(path), body: question, headers: { "x-request-id": "caller-id-1" } })
      expect(a.status, path).toBe(200)
      expect(a, path).toEqual(b)
    }
    // the instance with the front door answered these without the router's server span
    const served = frontSpans.filter((span) => span.attributes.get("podium.front_door") === true)
    expect(served.map((span) => span.attributes.get("url.path"))).toEqual(paths())
  })

  it("takes the leaderboard request's fields on every path, and answers model paths in the model's name", async () => {
    for (const path of paths()) {
      for (const payload of [{ input: "q7" }, { prompt: "q7" }, { question: "q7" }, { query: "q7" }, { messages: [], input: "q7" }]) {
        const [a, b] = await both({ path, token: tokenFor(path), body: JSON.stringify(payload) })
        expect(a.status, `${JSON.stringify(payload)} on ${path}`).toBe(200)
        expect(a, path).toEqual(b)
        if (path.includes("/models/")) {
          // (the compared body has its fresh ids and times replaced, so it is read as text)
          expect(a.body).toContain('"content":"tuned: a7"')
          expect(a.body).toContain('"model":"openai model"')
        }
      }
      for (const payload of [{}, { messages: [] }, { input: "a", prompt: "b" }]) {
        const [a, b] = await both({ path, token: tokenFor(path), body: JSON.stringify(payload) })
        expect(a.status, `${JSON.stringify(payload)} on ${path}`).toBe(400)
        expect(a, path).toEqual(b)
      }
    }
  })

  it("refuses the same requests with the same answers", async () => {
    const cases: Array<Sent & { readonly why: string }> = paths().flatMap((path): Array<Sent & { readonly why: string }> => [
      { why: "no credential", path, body: question },
      { why: "a malformed authorization header", path, body: question, headers: { authorization: "Bearer" } },
      { why: "basic auth", path, body: question, headers: { authorization: "Basic dXNlcjpwYXNz" } },
      { why: "an unknown API token", path, token: "pod_nottherealsecret0000000000", body: question },
      { why: "a session that does not verify", path, token: "eyJhbGciOiJIUzI1NiJ9.e30.bad", body: question },
      { why: "the wrong scope", path, token: wrongScope, body: question },
      { why: "a body that is not JSON", path, token: tokenFor(path), body: "{not json" },
      { why: "an empty body", path, token: tokenFor(path), body: "" },
      { why: "a JSON array", path, token: tokenFor(path), body: "[]" },
      { why: "wrong types", path, token: tokenFor(path), body: JSON.stringify({ messages: "hi", temperature: 9, max_tokens: 0 }) },
      { why: "U+0000", path, token: tokenFor(path), body: JSON.stringify({ messages: [{ role: "user", content: "a\u0000b" }] }) },
      { why: "a lone surrogate", path, token: tokenFor(path), body: '{"messages":[{"role":"user","content":"\\ud800"}]}' },
      { why: "deep nesting", path, token: tokenFor(path), body: "[".repeat(100) + "]".repeat(100) },
      { why: "U+0000 without a credential", path, body: JSON.stringify({ input: "\u0000" }) },
      { why: "streaming", path, token: tokenFor(path), body: JSON.stringify({ input: "hi", stream: true }) },
      { why: "a trailing slash", path: `${path}/`, token: tokenFor(path), body: question },
      { why: "a query string", path: `${path}?a=1`, token: tokenFor(path), body: question },
      { why: "another content type", path, token: tokenFor(path), body: question, headers: { "content-type": "text/plain" } },
      { why: "a sane caller request id", path, body: question, headers: { "x-request-id": "caller-id-1" } }
    ])
    cases.push(
      { why: "an unknown leaderboard", path: `/v1/leaderboard/${crypto.randomUUID()}/inference`, token: leaderboardToken, body: question },
      { why: "an unknown model", path: `/v1/models/${crypto.randomUUID()}/inference`, token: modelToken, body: question },
      { why: "an unknown version", path: `/v1/models/${modelId}/versions/${crypto.randomUUID()}/inference`, token: modelToken, body: question },
      { why: "an id that is not a UUID", path: "/v1/leaderboard/not-a-uuid/inference", token: leaderboardToken, body: question },
      { why: "a leaderboard token on a model", path: `/v1/models/${modelId}/inference`, token: leaderboardToken, body: question }
    )
    for (const sent of cases) {
      const [a, b] = await both(sent)
      expect(a, `${sent.why}: ${sent.path}`).toEqual(b)
    }
    // a session acts with every scope on both
    const [a, b] = await both({ path: paths()[0]!, token: owner.session, body: question })
    expect(a.status).toBe(200)
    expect(a).toEqual(b)
  }, 60_000)

  it("judges malformed path ids by the contract's schema, as the router does", async () => {
    const cases: Array<Sent> = [
      ...malformedIds(leaderboardId).map((id) => `/v1/leaderboard/${id}/inference`),
      ...malformedIds(leaderboardId).map((id) => `/v1/leaderboard/${id}/chat/completions`),
      ...malformedIds(modelId).map((id) => `/v1/models/${id}/inference`),
      ...malformedIds(modelId).map((id) => `/api/models/${id}/inference`),
      ...malformedIds(modelId).map((id) => `/v1/models/${id}/chat/completions`),
      ...malformedIds(modelId).map((id) => `/v1/models/${id}/versions/${versionId}/inference`),
      ...malformedIds(versionId).map((id) => `/api/models/${modelId}/versions/${id}/inference`)
    ].flatMap((path) => [{ path, token: tokenFor(path), body: question }, { path, body: question }])
    for (const sent of cases) {
      const [a, b] = await both(sent)
      expect(a, `${sent.token === undefined ? "no credential" : "credential"}: ${sent.path}`).toEqual(b)
    }
  }, 60_000)

  it("answers an upstream failure with the same 502", async () => {
    upstream.mode = "error"
    try {
      const [a, b] = await both({ path: paths()[0]!, token: leaderboardToken, body: question })
      expect(a.status).toBe(502)
      expect(a).toEqual(b)
    } finally {
      upstream.mode = "ok"
    }
  })

  it("answers a budget used up with the same 429 and Retry-After", async () => {
    const { secret } = await owner.api((c) =>
      c.tokens.create({ payload: { name: "spent", scopes: ["leaderboards:inference"], budget_limit: 0, budget_reset_interval: "daily" } })
    )
    const [a, b] = await both({ path: paths()[0]!, token: secret, body: question })
    expect(a.status).toBe(429)
    // The two answers are made moments apart, so the seconds until the daily reset may differ by
    // one when a second boundary falls between them; everything else must be identical.
    const waitA = Number(a.headers["retry-after"])
    const waitB = Number(b.headers["retry-after"])
    expect(waitA).toBeGreaterThan(0)
    expect(Math.abs(waitA - waitB)).toBeLessThanOrEqual(1)
    const sameWait = (answer: typeof a) => ({
      ...answer,
      headers: { ...answer.headers, "retry-after": "<seconds>" },
      body: answer.body.replace(/"retry_after_seconds":\d+/, `"retry_after_seconds":<seconds>`)
    })
    expect(sameWait(a)).toEqual(sameWait(b))
  })
})

