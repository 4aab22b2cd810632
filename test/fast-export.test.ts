import type { Tracer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { apiToken, malformedIds, type SignedIn, signedIn } from "./support/Builders.ts"
import { type Podium, type Reply, request, startPodium } from "./support/Podium.ts"
import { serverSpans } from "./support/Spans.ts"
import { freshDatabaseUrl } from "./support/database.ts"

// A JSONL trace export page is answered at the server's front door (FastExport), before the HttpApi
// router. Two instances on one database, one with the front door and one without, get the same
// requests: every answer must be the same, refused and odd ones included.

let front: Podium
let router: Podium
let owner: SignedIn
let stranger: SignedIn
let readToken: string
let wrongScope: string
let leaderboardId: string
const frontSpans: Array<Tracer.Span> = []

beforeAll(async () => {
  const env = { DATABASE_URL: await freshDatabaseUrl() }
  front = await startPodium(env, { tracing: serverSpans(frontSpans) })
  router = await startPodium(env, { fastInference: false })
  owner = await signedIn(front, "front-export-owner")
  stranger = await signedIn(front, "front-export-stranger")
  readToken = await apiToken(owner.api, ["leaderboards:read"])
  wrongScope = await apiToken(owner.api, ["leaderboards:inference"])
  const writeToken = await apiToken(owner.api, ["leaderboards:write"])
  const { leaderboard } = await owner.api((c) => c.leaderboards.create({ payload: { name: "exported", dataset_type: "PUSH" } }))
  leaderboardId = leaderboard.id
  // 25 pushed rows are 25 traces of source dataset
  const rows = Array.from({ length: 25 }, (_, i) => ({ input: `q${i + 1}`, expected: `a${i + 1}`, latency_ms: i * 1.5 }))
  const pushed = await front.request("POST", `/v1/leaderboard/${leaderboardId}/dataset/push`, { token: writeToken, json: rows })
  expect(pushed.status).toBe(202)
}, 120_000)
afterAll(async () => {
  await front?.stop()
  await router?.stop()
})

/** What must be the same: status, body and the headers a client reads. */
const comparable = (reply: Reply) => ({
  status: reply.status,
  body: reply.text.replace(/"request_id":"[^"]+"/g, "<request id>"),
  headers: Object.fromEntries(
    [...reply.headers].filter(([name]) =>
      ["content-type", "content-length", "transfer-encoding", "www-authenticate", "allow", "x-next-cursor"].includes(name) ||
      name === "x-request-id" && reply.headers.get(name) === "caller-id-1"
    )
  )
})

interface Sent {
  readonly path: string
  readonly token?: string | undefined
  readonly headers?: Record<string, string> | undefined
}

const both = async ({ headers, path, token }: Sent) => {
  const [a, b] = [await request(front.url, "GET", path, { token, headers }), await request(router.url, "GET", path, { token, headers })]
  return [comparable(a), comparable(b)] as const
}

describe("the front door answers a JSONL export page as the router does", () => {
  const base = () => `/v1/leaderboard/${leaderboardId}/traces`

  it("serves pages, cursors, filters and formats with the same lines and headers, through the front door", async () => {
    frontSpans.length = 0
    const first = await request(front.url, "GET", `${base()}?limit=10`, { token: readToken })
    const cursor = first.headers.get("x-next-cursor")!
    expect(cursor).toMatch(/^[0-9a-f-]{36}$/)
    const paths = [
      base(),
      `${base()}?limit=10`,
      `${base()}?limit=10&cursor=${cursor}`,
      `${base()}?limit=10&offset=20`,
      `${base()}?format=ndjson&limit=1000&batch_limit=7`,
      `${base()}?source=dataset&limit=3`,
      `${base()}?source=inference`,
      `${base()}?run_id=${crypto.randomUUID()}`,
      `${base()}?format=jsonl&offset=25`
    ]
    for (const path of paths) {
      const [a, b] = await both({ path, token: readToken, headers: { "x-request-id": "caller-id-1" } })
      expect(a.status, path).toBe(200)
      expect(a, path).toEqual(b)
    }
    expect(frontSpans.filter((span) => span.attributes.get("podium.front_door") === true)).toHaveLength(paths.length + 1)
    // a page is the rows in order: 25 lines, the next cursor absent on the last page
    const all = await request(front.url, "GET", `${base()}?limit=1000`, { token: readToken })
    expect(all.text.trim().split("\n").map((line) => JSON.parse(line).input)).toEqual(Array.from({ length: 25 }, (_, i) => `q${i + 1}`))
    expect(all.headers.get("x-next-cursor")).toBeNull()
  })

  it("refuses the same requests with the same answers, and leaves odd ones to the router", async () => {
    const path = base()
    const cases: Array<Sent & { readonly why: string }> = [
      { why: "no credential", path },
      { why: "a malformed authorization header", path, headers: { authorization: "Bearer" } },
      { why: "basic auth", path, headers: { authorization: "Basic dXNlcjpwYXNz" } },
      { why: "an unknown API token", path, token: "pod_nottherealsecret0000000000" },
      { why: "a session that does not verify", path, token: "eyJhbGciOiJIUzI1NiJ9.e30.bad" },
      { why: "the wrong scope", path, token: wrongScope },
      { why: "another workspace's leaderboard", path, token: stranger.session },
      { why: "an unknown leaderboard", path: `/v1/leaderboard/${crypto.randomUUID()}/traces`, token: readToken },
      { why: "an id that is not a UUID", path: "/v1/leaderboard/not-a-uuid/traces", token: readToken },
      { why: "a version-0 UUID", path: "/v1/leaderboard/00000000-0000-0000-8000-000000000000/traces", token: readToken },
      { why: "limit 0", path: `${path}?limit=0`, token: readToken },
      { why: "limit 1001", path: `${path}?limit=1001`, token: readToken },
      { why: "a padded limit", path: `${path}?limit=010`, token: readToken },
      { why: "a negative offset", path: `${path}?offset=-1`, token: readToken },
      { why: "batch_limit 101", path: `${path}?batch_limit=101`, token: readToken },
      { why: "an unknown source", path: `${path}?source=nope`, token: readToken },
      { why: "a cursor that is not a UUID", path: `${path}?cursor=abc`, token: readToken },
      { why: "the json format", path: `${path}?format=json&limit=2`, token: readToken },
      { why: "an unknown format", path: `${path}?format=csv`, token: readToken },
      { why: "a repeated parameter", path: `${path}?limit=2&limit=3`, token: readToken },
      { why: "an unknown parameter", path: `${path}?limit=2&a=1`, token: readToken },
      { why: "an encoded query", path: `${path}?source=data%73et`, token: readToken },
      { why: "U+0000 in the query", path: `${path}?source=%00`, token: readToken },
      { why: "a trailing slash", path: `${path}/`, token: readToken },
      { why: "a sane caller request id", path, headers: { "x-request-id": "caller-id-1" } }
    ]
    for (const malformed of malformedIds(leaderboardId)) {
      cases.push(
        { why: "a malformed id", path: `/v1/leaderboard/${malformed}/traces`, token: readToken },
        { why: "a malformed id without a credential", path: `/v1/leaderboard/${malformed}/traces` }
      )
    }
    for (const sent of cases) {
      const [a, b] = await both(sent)
      expect(a, `${sent.why}: ${sent.path}`).toEqual(b)
    }
    // a session acts with every scope on both
    const [a, b] = await both({ path: `${path}?limit=5`, token: owner.session })
    expect(a.status).toBe(200)
    expect(a).toEqual(b)
  }, 60_000)
})
