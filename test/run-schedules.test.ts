import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Cron, DateTime, Result, type Schema } from "effect"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { RunId } from "@podium/domain/shared"
import { type ModelFake, startModelFake } from "./fakes/ModelFake.ts"
import { aCandidate, aLeaderboard, type SignedIn, signedIn } from "./support/Builders.ts"
import { expectValidation } from "./support/Client.ts"
import { type Podium, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"
import { randomUUID } from "node:crypto"

// The scheduler looks every second here (RUN_SCHEDULER_CRON), so a seconds-level schedule runs in a test.

let fake: ModelFake
let podium: Podium
let owner: SignedIn

beforeAll(async () => {
  fake = await startModelFake()
  fake.models["right"] = (q) => q.replace("q", "a")
  fake.files["/data.jsonl"] = { contentType: "application/jsonl", body: '{"input":"q1","expected":"a1"}\n{"input":"q2","expected":"a2"}' }
  podium = await startPodium({ RUN_SCHEDULER_CRON: "* * * * * *" })
  owner = await signedIn(podium, "schedules-owner")
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

const leaderboard = async (overrides: Record<string, unknown> = {}) => {
  const { id } = (await owner.api((c) =>
    c.leaderboards.create({
      payload: aLeaderboard({ dataset_type: "GET", dataset_url: `${fake.url}/data.jsonl`, eval_type: "exact", ...overrides })
    })
  )).leaderboard
  await owner.api((c) =>
    c.leaderboards.addModel({ params: { leaderboard_id: id }, payload: aCandidate(`${fake.url}/v1`, { name: "right", model_name: "right" }) })
  )
  return id
}

const schedule = (id: LeaderboardId, value: Record<string, Schema.Json>) =>
  owner.api((c) => c.leaderboards.update({ params: { leaderboard_id: id }, payload: { schedule: value } }))

const runsOf = async (id: LeaderboardId) =>
  (await owner.api((c) => c.runs.list({ params: { leaderboard_id: id }, query: {} }))).runs

describe("schedules", () => {
  it("shows the next run in the schedule's time zone, refuses a bad cron or zone, and {} clears it", async () => {
    const id = await leaderboard()
    const before = DateTime.nowUnsafe()
    const { leaderboard: scheduled } = await schedule(id, { cron: "30 9 * * 1-5", timezone: "Europe/Paris" })
    const expected = Cron.next(Result.getOrThrow(Cron.parse("30 9 * * 1-5", "Europe/Paris")), DateTime.toDateUtc(before))
    expect(scheduled.schedule).toEqual({ cron: "30 9 * * 1-5", timezone: "Europe/Paris", next_run_at: expected.toISOString() })
    const { leaderboard: utc } = await schedule(id, { cron: "0 0 1 * *" })
    expect(utc.schedule).toMatchObject({ timezone: "UTC", next_run_at: expect.stringMatching(/-01T00:00:00\.000Z$/) })

    await expectValidation(schedule(id, { cron: "every monday" }), ["payload", "schedule", "cron"])
    await expectValidation(schedule(id, { cron: "61 * * * *" }), ["payload", "schedule", "cron"])
    await expectValidation(schedule(id, { cron: "* * * * *", timezone: "Mars/Olympus" }), ["payload", "schedule", "timezone"])
    const { leaderboard: cleared } = await schedule(id, {})
    expect(cleared.schedule).toEqual({})
  })

  it("starts scheduled runs, and none while paused or after end_date", async () => {
    const id = await leaderboard()
    await schedule(id, { cron: "* * * * * *" })
    await expect.poll(async () => (await runsOf(id)).length, { timeout: 15_000, interval: 100 }).toBeGreaterThanOrEqual(1)
    const [first] = await runsOf(id)
    expect(first).toMatchObject({ run_source: "schedule" })
    await expect.poll(async () => (await runsOf(id)).filter((r) => r.status === "succeeded").length, { timeout: 15_000, interval: 100 })
      .toBeGreaterThanOrEqual(1)

    await owner.api((c) => c.leaderboards.update({ params: { leaderboard_id: id }, payload: { status: "paused" } }))
    // a run started in the tick before the pause may still be under way
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    const paused = (await runsOf(id)).length
    await new Promise((resolve) => setTimeout(resolve, 3_000))
    expect((await runsOf(id)).length).toBe(paused)

    const ended = await leaderboard({ end_date: "2020-01-01T00:00:00Z" })
    await schedule(ended, { cron: "* * * * * *" })
    await new Promise((resolve) => setTimeout(resolve, 3_000))
    expect(await runsOf(ended)).toEqual([])
    // the occurrences were claimed all the same: next_run_at moves on
    const { leaderboard: after } = await owner.api((c) => c.leaderboards.get({ params: { leaderboard_id: ended } }))
    expect(Date.parse(String(after.schedule["next_run_at"]))).toBeGreaterThan(Date.now() - 2_000)
  })
})

describe("runs left queued", () => {
  it("a run stored but never enqueued (a crash in between) is enqueued again and runs", async () => {
    const id = await leaderboard()
    const [candidate] = (await owner.api((c) => c.leaderboards.get({ params: { leaderboard_id: id } }))).models
    const runId = RunId.make(randomUUID())
    await query(podium.databaseUrl, (sql) =>
      sql`INSERT INTO runs (id, leaderboard_id, workspace_id, status, run_source, eval_type, model_ids, improve_dataset,
            prior_status, created_at)
          VALUES (${runId}, ${id}, ${owner.workspace}, 'queued', 'manual', 'exact', ${[candidate!.id]}::uuid[], false, 'active',
            now() - interval '2 minutes')`)
    await expect.poll(async () =>
      (await owner.api((c) => c.runs.get({ params: { leaderboard_id: id, run_id: runId } }))).run.status
    , { timeout: 20_000, interval: 100 }).toBe("succeeded")
  })
})
