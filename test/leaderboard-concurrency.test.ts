import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Podium, session, startPodium } from "./support/Podium.ts"

// A PATCH changes what it sends and keeps the rest: concurrent PATCHes of different fields, on one
// instance or two on the same database, must all land. A read-modify-write without a version check
// lets the last writer put back the values the others had replaced.

let first: Podium
let second: Podium
let owner: string

beforeAll(async () => {
  first = await startPodium()
  second = await startPodium({ DATABASE_URL: first.databaseUrl })
  owner = await session("concurrent-owner")
})
afterAll(() => Promise.all([first?.stop(), second?.stop()]))

/** One PATCH per field, each setting a value no other PATCH sets. */
const changes: ReadonlyArray<Record<string, unknown>> = [
  { name: "renamed" },
  { description: "described" },
  { system_prompt: "Be brief." },
  { model_prompt: "Answer: {input}" },
  { judge_provider: "router" },
  { judge_model: "judge/model" },
  { dedupe: true },
  { auto_limit_size: true },
  { max_samples_to_gather: 7 },
  { daily_event_limit: 11 },
  { monthly_event_limit: 13 },
  { consolidate_every_events: 17 },
  { consolidate_every_hours: 19 },
  { schedule: { cron: "0 * * * *" } },
  ...Array.from({ length: 10 }, (_, i) => ({ [`note_${i}`]: `note ${i}` }))
]

const leaderboardOf = async (podium: Podium, id: string) => {
  const reply = await podium.request("GET", `/api/leaderboards/${id}`, { token: owner })
  expect(reply.status, reply.text).toBe(200)
  return { ...reply.body.leaderboard, ...reply.body.challenge }
}

describe("concurrent updates of one leaderboard", () => {
  it("every PATCH of a different field lands, across two instances", async () => {
    for (let round = 0; round < 3; round++) {
      const created = await first.request("POST", "/api/leaderboards", {
        token: owner,
        json: { name: `race ${round}`, dataset_type: "PUSH" }
      })
      expect(created.status, created.text).toBe(201)
      const id = created.body.leaderboard.id as string

      const replies = await Promise.all(changes.map((json, i) =>
        (i % 2 === 0 ? first : second).request("PATCH", `/api/leaderboards/${id}`, { token: owner, json })
      ))
      for (const reply of replies) expect(reply.status, reply.text).toBe(200)

      const stored = await leaderboardOf(first, id)
      for (const change of changes) expect(stored, `round ${round}`).toMatchObject(change)
      expect(await leaderboardOf(second, id)).toEqual(stored)
    }
  })
})
