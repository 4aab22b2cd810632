import { randomUUID } from "node:crypto"
import { request as httpRequest } from "node:http"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { apiToken, pushLeaderboard, pushToken, signedIn } from "./support/Builders.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

/**
 * Every credential a request presents is checked, and failed credentials are limited per client
 * address. Requests leave from chosen loopback addresses (127.0.0.x) so the server sees callers
 * at different addresses without trusting any forwarding header.
 */

interface Call {
  readonly bearer?: string
  readonly push?: string
  readonly json?: unknown
  /** The client's address (the socket's local address). */
  readonly from?: string
}

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: any
}

const call = (podium: Podium, method: string, path: string, options: Call = {}) =>
  new Promise<Answer>((resolve, reject) => {
    const headers: Record<string, string> = {}
    if (options.bearer !== undefined) headers["authorization"] = `Bearer ${options.bearer}`
    if (options.push !== undefined) headers["x-service-push-token"] = options.push
    const body = options.json === undefined ? undefined : Buffer.from(JSON.stringify(options.json))
    if (body !== undefined) {
      headers["content-type"] = "application/json"
      headers["content-length"] = String(body.length)
    }
    const request = httpRequest(`${podium.url}${path}`, { method, headers, localAddress: options.from ?? "127.0.0.1" }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8")
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch {
          parsed = text
        }
        resolve({ status: response.statusCode!, headers: response.headers, body: parsed })
      })
    })
    request.on("error", reject)
    request.end(body)
  })

const garbageBearer = "not-a-session-token"
const garbageApiToken = "pod_0000000000000000000000000000000000000000000"
const garbagePush = "hpd_0000000000000000000000000000000000000000000"
const rows = [{ input: "q?", expected: "a" }]

describe("every presented credential is checked", () => {
  let podium: Podium
  let session: string
  let writer: string
  let push: string
  let leaderboard: LeaderboardId

  beforeAll(async () => {
    podium = await startPodium()
    const owner = await signedIn(podium, "credentials-owner")
    session = owner.session
    writer = await apiToken(owner.api, ["leaderboards:write", "leaderboards:read", "leaderboards:inference"])
    leaderboard = await pushLeaderboard(owner.api)
    push = await pushToken(owner.api, leaderboard)
  })
  afterAll(() => podium.stop())

  it("a dataset push: any credential that fails beside one that passes is 401", async () => {
    const path = `/v1/leaderboard/${leaderboard}/dataset/push`
    const refused: Array<readonly [string, Call]> = [
      ["garbage bearer + valid push token", { bearer: garbageBearer, push }],
      ["garbage API token + valid push token", { bearer: garbageApiToken, push }],
      ["valid API token + garbage push token", { bearer: writer, push: garbagePush }],
      ["valid session + garbage push token", { bearer: session, push: garbagePush }],
      ["garbage bearer + garbage push token", { bearer: garbageBearer, push: garbagePush }],
      ["garbage push token alone", { push: garbagePush }]
    ]
    for (const [name, credentials] of refused) {
      const reply = await call(podium, "POST", path, { ...credentials, json: rows })
      expect(reply.status, name).toBe(401)
      expect(reply.body.error.code, name).toBe("unauthorized")
      expect(reply.headers["www-authenticate"], name).toBe("Bearer")
    }
    const accepted: Array<readonly [string, Call]> = [
      ["valid push token alone", { push }],
      ["valid API token alone", { bearer: writer }],
      ["valid session alone", { bearer: session }],
      ["valid API token + valid push token", { bearer: writer, push }],
      ["valid session + valid push token", { bearer: session, push }]
    ]
    for (const [name, credentials] of accepted) {
      expect((await call(podium, "POST", path, { ...credentials, json: rows })).status, name).toBe(202)
    }
  })

  it("routes of API tokens and of sessions: a push token that fails beside a valid bearer is 401", async () => {
    for (const [path, bearer] of [["/api/leaderboards", writer], ["/api/leaderboards", session], ["/api/tokens", session]] as const) {
      expect((await call(podium, "GET", path, { bearer, push: garbagePush })).status, path).toBe(401)
      // a push token is no credential of these routes: a valid one beside the bearer changes nothing
      expect((await call(podium, "GET", path, { bearer, push })).status, path).toBe(200)
    }
  })

  it("the front door (inference and export) answers the same combinations the same way", async () => {
    const inference = `/v1/leaderboard/${leaderboard}/inference`
    const exported = `/v1/leaderboard/${leaderboard}/traces?format=jsonl`
    for (const bearer of [writer, session]) {
      expect((await call(podium, "POST", inference, { bearer, push: garbagePush, json: { input: "hi" } })).status).toBe(401)
      expect((await call(podium, "GET", exported, { bearer, push: garbagePush })).status).toBe(401)
      // without the failing one: past authentication (no model serves this leaderboard yet)
      expect((await call(podium, "POST", inference, { bearer, json: { input: "hi" } })).status).toBe(409)
      expect((await call(podium, "POST", inference, { bearer, push, json: { input: "hi" } })).status).toBe(409)
      expect((await call(podium, "GET", exported, { bearer, push })).status).toBe(200)
    }
    expect((await call(podium, "POST", inference, { bearer: garbageBearer, push, json: { input: "hi" } })).status).toBe(401)
  })
})

describe("failed authentications are limited per client address", () => {
  let podium: Podium
  let session: string
  let reader: string
  let leaderboard: LeaderboardId
  const limit = 5

  beforeAll(async () => {
    podium = await startPodium({ AUTH_FAILURES_PER_MINUTE: String(limit) })
    const owner = await signedIn(podium, "limits-owner")
    session = owner.session
    reader = await apiToken(owner.api, ["leaderboards:read", "leaderboards:inference"])
    leaderboard = await pushLeaderboard(owner.api)
  })
  afterAll(() => podium.stop())

  const expectLimited = (reply: Answer, where: string) => {
    expect(reply.status, where).toBe(429)
    expect(reply.body.error.code, where).toBe("too_many_failed_authentications")
    expect(reply.headers["content-type"], where).toMatch(/^application\/json/)
    const retryAfter = Number(reply.headers["retry-after"])
    expect(Number.isInteger(retryAfter) && retryAfter >= 1, where).toBe(true)
    expect(reply.body.error.details.retry_after_seconds, where).toBe(retryAfter)
  }

  it("after the limit, an address is answered 429 with Retry-After before its credential is looked at", async () => {
    const from = "127.0.0.2"
    for (let i = 0; i < limit; i++) {
      expect((await call(podium, "GET", "/api/leaderboards", { bearer: `${garbageApiToken}${i}`, from })).status).toBe(401)
    }
    expectLimited(await call(podium, "GET", "/api/leaderboards", { bearer: garbageApiToken, from }), "router, garbage")
    // the limit is the address's: a valid credential from it waits too, at the router and the front door
    expectLimited(await call(podium, "GET", "/api/leaderboards", { bearer: reader, from }), "router, valid")
    expectLimited(
      await call(podium, "POST", `/v1/leaderboard/${leaderboard}/inference`, { bearer: reader, json: { input: "hi" }, from }),
      "front door inference"
    )
    expectLimited(await call(podium, "GET", `/v1/leaderboard/${leaderboard}/traces?format=jsonl`, { bearer: reader, from }), "front door export")
    expectLimited(await call(podium, "GET", "/api/tokens", { bearer: session, from }), "session route")
    // routes without credentials still answer
    expect((await call(podium, "GET", "/healthz", { from })).status).toBe(200)
  })

  it("another address, and valid callers, are not affected", async () => {
    for (let i = 0; i < limit * 3; i++) {
      expect((await call(podium, "GET", "/api/leaderboards", { bearer: reader, from: "127.0.0.1" })).status).toBe(200)
      expect((await call(podium, "GET", "/api/tokens", { bearer: session, from: "127.0.0.1" })).status).toBe(200)
    }
    expect((await call(podium, "GET", "/api/leaderboards", { bearer: garbageApiToken, from: "127.0.0.1" })).status).toBe(401)
  })

  it("failures at the front door count as the router's, and so do failed push tokens and sessions", async () => {
    const from = "127.0.0.3"
    const failures = [
      () => call(podium, "POST", `/v1/leaderboard/${leaderboard}/inference`, { bearer: garbageBearer, json: { input: "hi" }, from }),
      () => call(podium, "GET", `/v1/leaderboard/${leaderboard}/traces?format=jsonl`, { bearer: garbageApiToken, from }),
      () => call(podium, "POST", `/v1/leaderboard/${leaderboard}/dataset/push`, { push: garbagePush, json: rows, from }),
      () => call(podium, "GET", "/api/tokens", { bearer: garbageBearer, from }),
      () => call(podium, "POST", `/v1/models/${randomUUID()}/inference`, { bearer: garbageApiToken, json: { input: "hi" }, from })
    ]
    for (const failure of failures) expect((await failure()).status).toBe(401)
    expectLimited(await call(podium, "GET", "/api/leaderboards", { bearer: reader, from }), "after failures at both")
  })

  it("requests without a credential are 401 and do not count", async () => {
    const from = "127.0.0.4"
    for (let i = 0; i < limit * 3; i++) {
      expect((await call(podium, "GET", "/api/leaderboards", { from })).status).toBe(401)
      expect((await call(podium, "POST", `/v1/leaderboard/${leaderboard}/inference`, { json: { input: "hi" }, from })).status).toBe(401)
    }
    expect((await call(podium, "GET", "/api/leaderboards", { bearer: reader, from })).status).toBe(200)
  })
})
