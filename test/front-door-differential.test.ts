import type { Tracer } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FineTuneFake, startFineTuneFake } from "./fakes/FineTuneFake.ts"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { aCandidate, apiToken, malformedIds, pushToken, servingLeaderboard, type SignedIn, signedIn } from "./support/Builders.ts"
import { deployedModel, lastUser, referenceOf } from "./support/Models.ts"
import { type Podium, startPodium } from "./support/Podium.ts"
import { serverSpans } from "./support/Spans.ts"
import { freshDatabaseUrl } from "./support/database.ts"

// The front door (FrontDoor.ts) answers the hottest endpoints before the HttpApi router, built from
// the endpoints' own definitions. Two instances on one database, one with the front door and one
// without (`fastInference: false`), get the same generated requests — valid ones, refused ones,
// malformed ids, odd paths, queries, bodies and content types, every kind of credential — and must
// give the same status, body and headers. What necessarily differs is set aside, and only that:
// - `date`: the clock;
// - `x-request-id` when the caller sent none or one that is not sane: each instance makes a fresh
//   UUID (a sane one is echoed, and compared);
// - ids minted for each call, in bodies and `x-service-*` headers (the trace, the inference log,
//   a 500's request id): two calls are two traces. UUIDs the test itself made (leaderboard, model,
//   version, candidate) are kept, so an answer naming the wrong one still differs;
// - the fine-tuning fake's completion number and time stamp (`chatcmpl-<n>`, `created`), which
//   count its calls.

const fineTuneKey = "sk-ft-5b2d8e61c0a7"
let upstream: OpenAiFake
let tuner: FineTuneFake
let front: Podium
let router: Podium
let owner: SignedIn
let stranger: SignedIn
let known: ReadonlySet<string>
let ids: { readonly leaderboard: string; readonly model: string; readonly version: string }
let credentials: Record<Credential, (kind: Kind) => Record<string, string>>
const frontSpans: Array<Tracer.Span> = []

type Kind = "leaderboard" | "model" | "version"
type Credential =
  | "none"
  | "the route's scope"
  | "a session"
  | "another workspace's session"
  | "the wrong scope"
  | "an unknown API token"
  | "a session that does not verify"
  | "a push token"
  | "a push token as the bearer"
  | "a push token beside the route's scope"
  | "an unknown push token beside the route's scope"
  | "a bare Bearer"
  | "basic auth"

beforeAll(async () => {
  upstream = await startOpenAiFake()
  upstream.streams = true // `stream: true` requests are streamed: both transports must stream them alike
  tuner = await startFineTuneFake({ apiKey: fineTuneKey })
  tuner.answer = (model, messages) => model.startsWith("ft:") ? `tuned: ${referenceOf(lastUser(messages))}` : "no idea"
  const env = {
    DATABASE_URL: await freshDatabaseUrl(),
    FINE_TUNE_BASE_URL: tuner.baseUrl,
    FINE_TUNE_API_KEY: fineTuneKey,
    FINE_TUNE_BASE_MODELS: "base-model",
    FINE_TUNE_POLL_INTERVAL_MS: "50",
    // each instance counts failed credentials per address on its own: kept out of reach, so that a
    // window turning between the two sends of one request cannot make them differ
    AUTH_FAILURES_PER_MINUTE: "1000000"
  }
  front = await startPodium(env, { tracing: serverSpans(frontSpans) })
  router = await startPodium(env, { fastInference: false })
  owner = await signedIn(front, "differential-owner")
  stranger = await signedIn(front, "differential-stranger")
  const leaderboardToken = await apiToken(owner.api, ["leaderboards:inference"])
  const modelToken = await apiToken(owner.api, ["models:inference"])
  const wrongScope = await apiToken(owner.api, ["leaderboards:read", "models:read"])
  const serving = await servingLeaderboard(owner.api, aCandidate(`${upstream.url}/v1`))
  const push = await pushToken(owner.api, serving.id)
  const { modelId, versionId } = await deployedModel(front, owner, "openai")
  ids = { leaderboard: serving.id, model: modelId, version: versionId }
  known = new Set([serving.id, serving.candidate, modelId, versionId])
  const scoped = (kind: Kind) => kind === "leaderboard" ? leaderboardToken : modelToken
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
  credentials = {
    "none": () => ({}),
    "the route's scope": (kind) => bearer(scoped(kind)),
    "a session": () => bearer(owner.session),
    "another workspace's session": () => bearer(stranger.session),
    "the wrong scope": () => bearer(wrongScope),
    "an unknown API token": () => bearer("pod_nottherealsecret0000000000"),
    "a session that does not verify": () => bearer("eyJhbGciOiJIUzI1NiJ9.e30.bad"),
    "a push token": () => ({ "x-service-push-token": push }),
    "a push token as the bearer": () => bearer(push),
    "a push token beside the route's scope": (kind) => ({ ...bearer(scoped(kind)), "x-service-push-token": push }),
    "an unknown push token beside the route's scope": (kind) => ({ ...bearer(scoped(kind)), "x-service-push-token": "hpd_nottherealone0000" }),
    "a bare Bearer": () => ({ authorization: "Bearer" }),
    "basic auth": () => ({ authorization: "Basic dXNlcjpwYXNz" })
  }
}, 180_000)
afterAll(async () => {
  await front?.stop()
  await router?.stop()
  await upstream?.close()
  await tuner?.close()
})

/** The GUID-shaped id that is no RFC 4122 UUID (its version nibble is 0): 404 at the front door once, 400 through the router. */
const guid = "12345678-1234-0234-8234-123456789abc"

/** Every path the front door serves, by the kind of id it takes. */
const routes: ReadonlyArray<{ readonly kind: Kind; readonly path: (id: string, version: string) => string }> = [
  { kind: "leaderboard", path: (id) => `/v1/leaderboard/${id}/inference` },
  { kind: "leaderboard", path: (id) => `/v1/leaderboard/${id}/chat/completions` },
  { kind: "model", path: (id) => `/v1/models/${id}/inference` },
  { kind: "model", path: (id) => `/api/models/${id}/inference` },
  { kind: "model", path: (id) => `/v1/models/${id}/chat/completions` },
  { kind: "version", path: (id, version) => `/v1/models/${id}/versions/${version}/inference` },
  { kind: "version", path: (id, version) => `/api/models/${id}/versions/${version}/inference` }
]

interface Sent {
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: string | Uint8Array | undefined
}

interface Answer {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

const send = async (base: string, { body, headers, method, path }: Sent): Promise<Answer> => {
  const response = await fetch(base + path, { method, headers, body: method === "GET" || method === "HEAD" ? undefined : body })
  return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() }
}

const uuids = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi
const aUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const saneRequestId = /^[A-Za-z0-9._:-]{1,128}$/

/** Ids minted per call replaced; the test's own ids kept. */
const minted = (text: string) => text.replace(uuids, (id) => known.has(id.toLowerCase()) ? id : "<minted>")

/** The answer with only what necessarily differs between two calls set aside (see the top of the file). */
const comparable = (answer: Answer, sent: Sent) => {
  const { date: _date, "x-request-id": requestId, ...headers } = answer.headers
  const echoed = sent.headers["x-request-id"]
  return {
    status: answer.status,
    headers: {
      ...Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, name.startsWith("x-service-") ? minted(value) : value])),
      "x-request-id": echoed !== undefined && saneRequestId.test(echoed) ? requestId : aUuid.test(requestId ?? "") ? "<fresh>" : requestId
    },
    body: minted(answer.body).replace(/chatcmpl-\d+/g, "chatcmpl-<n>").replace(/"created":\d+/g, "\"created\":<t>")
  }
}

const both = async (sent: Sent) => {
  const [a, b] = [await send(front.url, sent), await send(router.url, sent)]
  return [comparable(a, sent), comparable(b, sent)] as const
}

const question = JSON.stringify({ messages: [{ role: "user", content: "q7" }] })

/** Bodies: the ones that serve, the ones the contract refuses, hostile bytes, and generated JSON. */
const bodies: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  fc.constant(question),
  fc.constantFrom(
    { input: "q7" },
    { prompt: "q7" },
    { question: "q7" },
    { query: "q7" },
    { messages: [], input: "q7" },
    {},
    { messages: [] },
    { input: "a", prompt: "b" },
    { input: "hi", stream: true },
    { input: "hi", stream: true, stream_options: { include_usage: true } },
    { messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }], stream: true, tools: [{ type: "function", function: { name: "f" } }] },
    { messages: "hi", temperature: 9, max_tokens: 0 },
    { input: 7 }
  ).map((payload) => JSON.stringify(payload)),
  fc.constantFrom(
    "",
    "{not json",
    "[]",
    "null",
    "1",
    "\"q7\"",
    "[".repeat(40) + "]".repeat(40),
    JSON.stringify({ input: "a\u0000b" }),
    "{\"messages\":[{\"role\":\"user\",\"content\":\"\\ud800\"}]}"
  ),
  fc.constant(new Uint8Array([0x7b, 0x22, 0x69, 0x6e, 0x70, 0x75, 0x74, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])),
  fc.record({
    messages: fc.array(fc.record({
      role: fc.constantFrom("user", "system", "assistant", "tool", "bogus"),
      content: fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.constant(null))
    }), { maxLength: 3 }),
    temperature: fc.oneof(fc.double({ min: -1, max: 3, noNaN: true }), fc.constant("hot")),
    max_tokens: fc.integer({ min: -2, max: 5000 }),
    input: fc.string({ maxLength: 12 })
  }, { requiredKeys: [] }).map((payload) => JSON.stringify(payload)),
  fc.json({ maxDepth: 3 })
)

/**
 * Requests that serve, each changed in none, one or a few of its parts (the method, the path's
 * shape, the ids, the credential, the content type, the request id, the body) to generated values:
 * about one in five serves, the rest are refused or odd in as many ways as the generators make.
 */
const requests = () => {
  const idOf = (valid: string) =>
    fc.oneof(
      { weight: 1, arbitrary: fc.constant(guid) },
      { weight: 1, arbitrary: fc.uuid().map((id) => id.toLowerCase()) },
      { weight: 2, arbitrary: fc.constantFrom(...malformedIds(valid)) },
      { weight: 1, arbitrary: fc.stringMatching(/^[0-9A-Za-z._~:@!$&'()*+,;=-]{1,40}$/) }
    )
  const shape = fc.constantFrom<(path: string) => string>(
    (path) => `${path}/`,
    (path) => path.toUpperCase(),
    (path) => path.replace("/inference", "//inference").replace("/chat/", "//chat/"),
    (path) => `${path}?a=1`,
    (path) => `${path}?a=1&a=2&stream=true`,
    (path) => `${path}?x=%00`,
    (path) => `${path}?%zz`,
    (path) => `${path}?q=${"z".repeat(300)}`
  )
  const parts = ["method", "shape", "leaderboard", "model", "version", "credential", "contentType", "requestId", "body"] as const
  return fc.record({
    route: fc.constantFrom(...routes),
    changed: fc.oneof(
      { weight: 1, arbitrary: fc.constant<ReadonlyArray<typeof parts[number]>>([]) },
      { weight: 4, arbitrary: fc.subarray([...parts], { minLength: 1, maxLength: 3 }) }
    ),
    leaderboard: idOf(ids.leaderboard),
    model: idOf(ids.model),
    version: idOf(ids.version),
    shape,
    method: fc.constantFrom<string>("GET", "PUT", "PATCH", "DELETE", "HEAD"),
    credential: fc.constantFrom(...(Object.keys(credentials) as Array<Credential>)),
    contentType: fc.constantFrom<string | undefined>(
      "application/json; charset=utf-8",
      "Application/JSON",
      "application/json-patch+json",
      "text/plain",
      undefined
    ),
    requestId: fc.constantFrom<string | undefined>("caller-id-1", "not sane: spaces"),
    body: bodies
  }).map((generated): Sent & { readonly why: string } => {
    const { changed, route } = generated
    const pick = <K extends typeof parts[number]>(part: K, valid: typeof generated[K]) => changed.includes(part) ? generated[part] : valid
    const credential = pick("credential", "the route's scope")
    const contentType = pick("contentType", "application/json")
    const requestId = pick("requestId", undefined)
    const method = pick("method", "POST")
    const id = route.kind === "leaderboard" ? pick("leaderboard", ids.leaderboard) : pick("model", ids.model)
    const path = pick("shape", (path: string) => path)(route.path(id, pick("version", ids.version)))
    const headers: Record<string, string> = {
      ...credentials[credential](route.kind),
      ...(contentType === undefined ? {} : { "content-type": contentType }),
      ...(requestId === undefined ? {} : { "x-request-id": requestId })
    }
    return { method, path, headers, body: pick("body", question), why: `${method} ${path} with ${credential}, ${contentType ?? "no content type"}` }
  })
}

describe("the front door and the router give the same answers", () => {
  it("to generated requests: valid, refused, malformed, odd, with every kind of credential", async () => {
    frontSpans.length = 0
    const statuses = new Map<number, number>()
    await fc.assert(
      fc.asyncProperty(requests(), async (sent) => {
        const [a, b] = await both(sent)
        statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1)
        expect(a, sent.why).toEqual(b)
      }),
      { numRuns: 120, endOnFailure: true }
    )
    // the comparison was not vacuous: the front door answered many of them, successes and refusals
    const answered = frontSpans.filter((span) => span.attributes.get("podium.front_door") === true)
    expect(answered.length, [...statuses].join(" ")).toBeGreaterThan(40)
    expect(statuses.get(200) ?? 0).toBeGreaterThan(5)
    expect([...statuses.keys()].filter((status) => status >= 400).length).toBeGreaterThan(3)
  }, 120_000)

  it("to streamed requests on every path: the same events, headers and status", async () => {
    frontSpans.length = 0
    for (const route of routes) {
      for (const payload of [
        { input: "hi", stream: true },
        { messages: [{ role: "user", content: [{ type: "text", text: "q7" }] }], stream: true, stream_options: { include_usage: true }, seed: 7 }
      ]) {
        const path = route.path(route.kind === "leaderboard" ? ids.leaderboard : ids.model, ids.version)
        const sent = { method: "POST", path, headers: { ...credentials["the route's scope"](route.kind), "content-type": "application/json" }, body: JSON.stringify(payload) }
        const [a, b] = await both(sent)
        expect(a, `${path} ${sent.body}`).toEqual(b)
        if (route.kind === "leaderboard") {
          expect(a.status, path).toBe(200)
          expect((a.headers as Record<string, string>)["content-type"]).toMatch(/^text\/event-stream/)
          expect(a.body).toMatch(/data: \[DONE\]\n\n$/)
          expect(a.body.includes("\"usage\""), sent.body).toBe(payload.stream_options !== undefined)
        }
      }
    }
    expect(frontSpans.filter((span) => span.attributes.get("podium.front_door") === true).length).toBe(2 * routes.length)
  })

  it("to the GUID-shaped id that is no RFC 4122 UUID: 400 validation_failed on every path, before and after the credential", async () => {
    frontSpans.length = 0
    for (const route of routes) {
      for (const [id, version] of [[guid, ids.version], [ids.model, guid]] as const) {
        if (route.kind !== "version" && id !== guid) continue
        const path = route.path(route.kind === "leaderboard" ? guid : id, version)
        for (const credential of ["the route's scope", "none"] as const) {
          const sent = { method: "POST", path, headers: { ...credentials[credential](route.kind), "content-type": "application/json" }, body: question }
          const [a, b] = await both(sent)
          expect(a, `${credential}: ${path}`).toEqual(b)
          expect(a.status, path).toBe(credential === "none" ? 401 : 400)
          if (credential !== "none") expect(JSON.parse(a.body).error.code).toBe("validation_failed")
        }
      }
    }
    // the front door answered these itself (it no longer declines ids to the router)
    expect(frontSpans.filter((span) => span.attributes.get("podium.front_door") === true).length).toBe(2 * (routes.length + 2))
  })
})
