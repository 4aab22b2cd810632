import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createHash } from "node:crypto"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { aLeaderboard, type SignedIn, signedIn } from "./support/Builders.ts"
import { client, expectError } from "./support/Client.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

let podium: Podium
let owner: SignedIn

beforeAll(async () => {
  podium = await startPodium()
  owner = await signedIn(podium, "datasets-owner")
})
afterAll(async () => {
  await podium.stop()
})

const pushLeaderboard = async (overrides: Parameters<typeof aLeaderboard>[0] = {}) =>
  (await owner.api((c) => c.leaderboards.create({ payload: aLeaderboard(overrides) }))).leaderboard.id

const download = async (id: LeaderboardId, token: string, version?: number) => {
  const reply = await podium.request("GET", `/v1/leaderboard/${id}/dataset${version === undefined ? "" : `?version=${version}`}`, {
    headers: token.startsWith("hpd_") ? { "x-service-push-token": token } : { authorization: `Bearer ${token}` }
  })
  return reply
}

describe("push, consolidate, download", () => {
  it("stores valid rows, rejects the others one by one, and consolidates them into a version", async () => {
    const id = await pushLeaderboard()
    const pushed = await owner.api((c) =>
      c.pushDatasets.push({
        params: { leaderboard_id: id },
        payload: [
          { input: "2+2?", expected: "4", extra: { kept: true } },
          { messages: [{ role: "user", content: "hi" }] },
          { expected: "no input" },
          "not a row",
          { input: "x", tags: "not an array" }
        ]
      })
    )
    expect(pushed).toMatchObject({ accepted_rows: 2, rejected_rows: 3, status: "partial", pending_events: 2 })
    expect(pushed.rejections.map((r) => [r.index, r.code])).toEqual([
      [2, "missing_input"],
      [3, "invalid_row"],
      [4, "invalid_row"]
    ])

    const consolidated = await owner.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: id } }))
    expect(consolidated.version).toMatchObject({ version: 1, row_count: 2, added_rows: 2, trigger: "manual" })
    expect(consolidated.pending_events).toBe(0)

    const reply = await download(id, owner.session)
    expect(reply.status).toBe(200)
    const lines = reply.text.trimEnd().split("\n").map((l) => JSON.parse(l))
    expect(lines).toEqual([
      { input: "2+2?", expected: "4", extra: { kept: true } },
      { messages: [{ role: "user", content: "hi" }] }
    ])
    const sha = createHash("sha256").update(reply.text).digest("hex")
    expect(consolidated.version!.sha256).toBe(sha)
    expect(reply.headers.get("x-service-dataset-sha256")).toBe(sha)

    const status = await owner.api((c) => c.pushDatasets.status({ params: { leaderboard_id: id } }))
    expect(status.versions.map((v) => v.version)).toEqual([1])
    expect(status.limits.daily.used).toBe(2)
  })

  it("push tokens work for their own leaderboard only, and stop when revoked", async () => {
    const id = await pushLeaderboard()
    const other = await pushLeaderboard()
    const issued = await owner.api((c) => c.datasetAdmin.issueToken({ params: { leaderboard_id: id }, payload: { name: "ingest" } }))
    expect(issued.secret).toMatch(/^hpd_/)
    const push = client(podium, issued.secret!)
    const answer = await push((c) => c.pushDatasets.push({ params: { leaderboard_id: id }, payload: { rows: [{ input: "a" }] } }))
    expect(answer.accepted_rows).toBe(1)
    await expectError(push((c) => c.pushDatasets.push({ params: { leaderboard_id: other }, payload: { input: "a" } })), 401, "unauthorized")
    const listed = await owner.api((c) => c.datasetAdmin.issueToken({ params: { leaderboard_id: id }, payload: { issue_token: false } }))
    expect(listed.secret).toBeUndefined()
    expect(listed.tokens.map((t) => t.name)).toEqual(["ingest"])
    expect(JSON.stringify(listed)).not.toContain(issued.secret!)
    expect(await owner.api((c) => c.datasetAdmin.revokeTokens({ params: { leaderboard_id: id } }))).toEqual({ revoked: 1 })
    await expectError(push((c) => c.pushDatasets.status({ params: { leaderboard_id: id } })), 401, "unauthorized")
  })

  it("accepts exactly the limit under concurrent pushes", async () => {
    const id = await pushLeaderboard({ daily_event_limit: 3000 })
    const rows = Array.from({ length: 500 }, (_, i) => ({ input: `q${i}` }))
    const answers = await Promise.allSettled(Array.from({ length: 8 }, () =>
      owner.api((c) => c.pushDatasets.push({ params: { leaderboard_id: id }, payload: rows }))
    ))
    const accepted = answers.reduce((n, a) => n + (a.status === "fulfilled" ? a.value.accepted_rows : 0), 0)
    expect(accepted).toBe(3000)
    const status = await owner.api((c) => c.pushDatasets.status({ params: { leaderboard_id: id } }))
    expect(status.pending_events).toBe(3000)
    const refused = await expectError(
      owner.api((c) => c.pushDatasets.push({ params: { leaderboard_id: id }, payload: { input: "one more" } })),
      429,
      "event_limit_exceeded"
    )
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0)
  })
})
