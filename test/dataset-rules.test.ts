import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { pushLeaderboard, pushRows, type SignedIn, signedIn } from "./support/Builders.ts"
import { type Caller, expectError, unchecked } from "./support/Client.ts"
import { type Podium, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

/** The rules a push meets before and around its rows: request size, leaderboard state, text, event limits, timed consolidation. */

let podium: Podium
let owner: SignedIn

beforeAll(async () => {
  podium = await startPodium()
  owner = await signedIn(podium, "dataset-rules-owner")
})
afterAll(async () => {
  await podium.stop()
})

const pushTo = (caller: Caller, leaderboard_id: LeaderboardId, payload: unknown) =>
  caller((c) => c.pushDatasets.push({ params: { leaderboard_id }, payload }))

const statusOf = (caller: Caller, leaderboard_id: LeaderboardId) =>
  caller((c) => c.pushDatasets.status({ params: { leaderboard_id } }))

const setStatus = (leaderboard_id: LeaderboardId, status: "active" | "paused" | "archived") =>
  owner.api((c) => c.leaderboards.update({ params: { leaderboard_id }, payload: { status } }))

const inHours = (hours: number) => new Date(Date.now() + hours * 3_600_000).toISOString()

describe("request size", () => {
  it("takes exactly 10,000 rows, and refuses 10,001 with 413 payload_too_large", async () => {
    const id = await pushLeaderboard(owner.api)
    const tooMany = await expectError(pushTo(owner.api, id, pushRows(10_001)), 413, "payload_too_large")
    expect(tooMany.error.message).toContain("10000")
    expect((await statusOf(owner.api, id)).pending_events).toBe(0)

    expect(await pushTo(owner.api, id, pushRows(10_000))).toMatchObject({ accepted_rows: 10_000, status: "accepted" })
  })

  it("refuses a body over 10 MiB with few rows", async () => {
    const id = await pushLeaderboard(owner.api)
    const big = "x".repeat(3 * 1024 * 1024)
    const rows = [1, 2, 3, 4].map((i) => ({ input: `${i} ${big}` })) // 12 MiB in 4 rows
    await expectError(pushTo(owner.api, id, rows), 413, "payload_too_large")
    expect((await statusOf(owner.api, id)).pending_events).toBe(0)
    // three of them (9 MiB) are fine
    expect((await pushTo(owner.api, id, rows.slice(1))).accepted_rows).toBe(3)
  })
})

describe("leaderboards that take no rows", () => {
  it("refuses a GET leaderboard with 409 not_push_dataset", async () => {
    const id = await pushLeaderboard(owner.api, { dataset_type: "GET", dataset_url: "https://example.com/rows.jsonl" })
    await expectError(pushTo(owner.api, id, pushRows(1)), 409, "not_push_dataset")
  })

  it("refuses while paused (409 leaderboard_paused) and takes rows again once active", async () => {
    const id = await pushLeaderboard(owner.api)
    await setStatus(id, "paused")
    await expectError(pushTo(owner.api, id, pushRows(2)), 409, "leaderboard_paused")
    expect((await statusOf(owner.api, id)).pending_events).toBe(0)
    await setStatus(id, "active")
    expect(await pushTo(owner.api, id, pushRows(2))).toMatchObject({ accepted_rows: 2, pending_events: 2 })
  })

  it("refuses an archived leaderboard with 409 leaderboard_archived", async () => {
    const id = await pushLeaderboard(owner.api)
    await setStatus(id, "archived")
    await expectError(pushTo(owner.api, id, pushRows(1)), 409, "leaderboard_archived")
  })

  it("refuses after end_date with 409 collection_ended, and takes rows before it", async () => {
    const ended = await pushLeaderboard(owner.api, { end_date: inHours(-1) })
    await expectError(pushTo(owner.api, ended, pushRows(1)), 409, "collection_ended")
    const open = await pushLeaderboard(owner.api, { end_date: inHours(24) })
    expect((await pushTo(owner.api, open, pushRows(1))).accepted_rows).toBe(1)
  })
})

describe("text Postgres cannot store", () => {
  it("rejects only the rows with U+0000 or a lone surrogate (unstorable_text), and stores the others", async () => {
    const id = await pushLeaderboard(owner.api)
    // raw text: JSON.stringify would escape a lone surrogate itself, and the wire is the point here
    const body = [
      String.raw`{"input":"fine"}`,
      String.raw`{"input":"nul \u0000 inside"}`,
      String.raw`{"input":"lone \ud800 surrogate"}`,
      String.raw`{"input":"a pair \ud83d\ude00 is fine"}`,
      String.raw`{"input":"an escaped backslash \\u0000 is text"}`,
      String.raw`{"input":"ok","metadata":{"deep":["\udfff"]}}`
    ]
    const answer = await unchecked(podium, "POST", `/v1/leaderboard/${id}/dataset/push`, {
      token: owner.session,
      headers: { "content-type": "application/json" },
      body: `[${body.join(",")}]`
    }) as { accepted_rows: number; status: string; rejections: Array<{ index: number; code: string }> }
    expect(answer.accepted_rows).toBe(3)
    expect(answer.status).toBe("partial")
    expect(answer.rejections.map((r) => [r.index, r.code])).toEqual([
      [1, "unstorable_text"],
      [2, "unstorable_text"],
      [5, "unstorable_text"]
    ])
    expect((await statusOf(owner.api, id)).pending_events).toBe(3)
  })

  it("stores rows exactly as pushed, whatever their text holds: control characters, separators, quotes, backslashes", async () => {
    // the insert sends the rows' JSON joined by U+001E and the text columns as JSON arrays: none of
    // these characters may move a row's text into another row or column
    const odd = "rec\u001esep\u001f unit\ttab\nline\r, comma \"quote\" back\\slash {\"json\":[1]} é 😀"
    for (const withIds of [false, true]) {
      const id = await pushLeaderboard(owner.api)
      const rows = [
        { input: odd, expected: `${odd} answer`, metadata: { note: odd }, tags: [odd] },
        { prompt: "second", output: "\u001e" },
        { messages: [{ role: "user", content: odd }], answer: odd },
        { question: "\u001e\u001e", completion: "," }
      ].map((row, i) => withIds ? { id: `${odd} #${i}`, ...row } : row)
      const answer = await pushTo(owner.api, id, rows)
      expect(answer.accepted_rows).toBe(rows.length)
      const stored = await query<{ data: string; input: string | null; reference: string | null; client_id: string | null }>(
        podium.databaseUrl,
        (sql) => sql`SELECT data::text AS data, input, reference, client_id FROM dataset_rows WHERE leaderboard_id = ${id} ORDER BY id`
      )
      expect(stored).toEqual([
        { data: JSON.stringify(rows[0]), input: odd, reference: `${odd} answer`, client_id: withIds ? `${odd} #0` : null },
        { data: JSON.stringify(rows[1]), input: "second", reference: "\u001e", client_id: withIds ? `${odd} #1` : null },
        { data: JSON.stringify(rows[2]), input: null, reference: odd, client_id: withIds ? `${odd} #2` : null },
        { data: JSON.stringify(rows[3]), input: "\u001e\u001e", reference: ",", client_id: withIds ? `${odd} #3` : null }
      ])
    }
  })

  it("still refuses a body nested deeper than 32 levels with 400", async () => {
    const id = await pushLeaderboard(owner.api)
    const deep = `{"input":"x","nested":${"[".repeat(40)}${"]".repeat(40)}}`
    const reply = await podium.request("POST", `/v1/leaderboard/${id}/dataset/push`, {
      token: owner.session,
      headers: { "content-type": "application/json" },
      body: deep
    })
    expect(reply.status, reply.text).toBe(400)
    expect(reply.body.error.code).toBe("validation_failed")
    expect((await statusOf(owner.api, id)).pending_events).toBe(0)
  })
})

describe("event limits", () => {
  it("accepts up to the daily limit and lists the rest as event_limit_exceeded (partial)", async () => {
    const id = await pushLeaderboard(owner.api, { daily_event_limit: 10 })
    const answer = await pushTo(owner.api, id, pushRows(15))
    expect(answer).toMatchObject({ accepted_rows: 10, rejected_rows: 5, status: "partial", pending_events: 10 })
    expect(answer.rejections.map((r) => [r.index, r.code])).toEqual(
      [10, 11, 12, 13, 14].map((index) => [index, "event_limit_exceeded"])
    )
    expect(answer.limits.daily).toMatchObject({ used: 10, limit: 10 })
  })

  it("answers 429 with Retry-After up to the next UTC midnight once the day is used up", async () => {
    const id = await pushLeaderboard(owner.api, { daily_event_limit: 3 })
    expect((await pushTo(owner.api, id, pushRows(3))).accepted_rows).toBe(3)
    const refused = await expectError(pushTo(owner.api, id, pushRows(1, "late")), 429, "event_limit_exceeded")
    const retryAfter = Number(refused.headers["retry-after"])
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(86_400)
    const midnight = new Date()
    midnight.setUTCHours(24, 0, 0, 0)
    expect(Math.abs(retryAfter - (midnight.getTime() - Date.now()) / 1000)).toBeLessThan(5)
    expect((await statusOf(owner.api, id)).limits.daily).toMatchObject({ used: 3, limit: 3, resets_at: midnight.toISOString() })
  })

  it("counts against the monthly limit, even when it is lower than the daily one", async () => {
    const id = await pushLeaderboard(owner.api, { daily_event_limit: 100, monthly_event_limit: 3 })
    const answer = await pushTo(owner.api, id, pushRows(5))
    expect(answer).toMatchObject({ accepted_rows: 3, rejected_rows: 2, status: "partial" })
    expect(answer.limits.monthly).toMatchObject({ used: 3, limit: 3 })
    const refused = await expectError(pushTo(owner.api, id, pushRows(1, "late")), 429, "event_limit_exceeded")
    const nextMonth = new Date()
    nextMonth.setUTCHours(0, 0, 0, 0)
    nextMonth.setUTCDate(1)
    nextMonth.setUTCMonth(nextMonth.getUTCMonth() + 1)
    expect(Math.abs(Number(refused.headers["retry-after"]) - (nextMonth.getTime() - Date.now()) / 1000)).toBeLessThan(5)
  })

  it("counts against a monthly limit alone", async () => {
    const id = await pushLeaderboard(owner.api, { monthly_event_limit: 4 })
    expect((await pushTo(owner.api, id, pushRows(3))).accepted_rows).toBe(3)
    expect(await pushTo(owner.api, id, pushRows(3, "more"))).toMatchObject({ accepted_rows: 1, rejected_rows: 2 })
    await expectError(pushTo(owner.api, id, pushRows(1, "late")), 429, "event_limit_exceeded")
    expect((await statusOf(owner.api, id)).pending_events).toBe(4)
  })
})

describe("timed consolidation (consolidate_every_hours)", () => {
  // the durable check ticks every second here, so the test waits seconds, not a minute
  let fast: Podium
  let user: SignedIn
  beforeAll(async () => {
    fast = await startPodium({ DATASET_CONSOLIDATION_CRON: "* * * * * *" })
    user = await signedIn(fast, "dataset-rules-timed")
  })
  afterAll(async () => {
    await fast.stop()
  })

  it("makes a version with trigger hours once the oldest pending row is older than the period", async () => {
    const id = await pushLeaderboard(user.api, { consolidate_every_hours: 1 })
    const pushed = await pushTo(user.api, id, pushRows(3))
    const nextAt = Date.parse(pushed.consolidation.next_at!)
    expect(Math.abs(nextAt - (Date.now() + 3_600_000))).toBeLessThan(60_000)

    // several ticks pass: nothing is due yet
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    expect((await statusOf(user.api, id)).versions).toEqual([])

    await query(fast.databaseUrl, (sql) =>
      sql`UPDATE datasets SET pending_since = pending_since - interval '2 hours' WHERE leaderboard_id = ${id} RETURNING pending`
    )
    // well under a minute: the default (minutely) check must not be what makes it
    const deadline = Date.now() + 8_000
    let status = await statusOf(user.api, id)
    while (status.versions.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      status = await statusOf(user.api, id)
    }
    expect(status.versions.map((v) => [v.version, v.row_count, v.trigger])).toEqual([[1, 3, "hours"]])
    expect(status.pending_events).toBe(0)
    expect(status.consolidation.last_consolidated_at).not.toBeNull()
  })
})
