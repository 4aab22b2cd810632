/**
 * A server killed with SIGKILL under push load loses no acknowledged row and stores none twice:
 * `podium serve` runs as a child process against its own database, four clients push batches with
 * row ids, the server is killed mid-load and started again on the same database.
 */
import { randomBytes } from "node:crypto"
import { afterAll, describe, expect, it } from "vitest"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { pushLeaderboard, type PushRow, pushRows, signedIn } from "./support/Builders.ts"
import { ApiFailure, type Caller } from "./support/Client.ts"
import { at, serveChild, stopChildren } from "./support/ChildPodium.ts"
import { freshDatabaseUrl } from "./support/database.ts"
import { sessionSecret } from "./support/Podium.ts"

afterAll(() => {
  stopChildren()
})

const pushTo = (api: Caller, leaderboard_id: LeaderboardId, rows: ReadonlyArray<PushRow>) =>
  api((c) => c.pushDatasets.push({ params: { leaderboard_id }, payload: { rows } }))

/** Consolidates what is pending and answers how many times each row id is in the new version. */
const consolidatedIds = async (api: Caller, leaderboard_id: LeaderboardId) => {
  await api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id } }))
  const text = await api((c) => c.pushDatasets.download({ params: { leaderboard_id }, query: {} }))
  const counts = new Map<string, number>()
  for (const line of text.trimEnd().split("\n")) {
    const { id } = JSON.parse(line) as { id: string }
    counts.set(id, (counts.get(id) ?? 0) + 1)
  }
  return counts
}

describe("kill -9 under push load", () => {
  it("keeps every row that got a 202, exactly once, and none twice after retries", async () => {
    const env = { DATABASE_URL: await freshDatabaseUrl(), SESSION_JWT_SECRET: sessionSecret, SECRETS_KEY: randomBytes(32).toString("hex") }
    const first = await serveChild(env)
    const owner = await signedIn(at(first.url), "crash-owner")
    const id = await pushLeaderboard(owner.api)

    const acknowledged = new Set<string>()
    const unanswered: Array<ReadonlyArray<PushRow>> = []
    let killed = false
    const pushLoop = async (clientNo: number) => {
      for (let batch = 0; ; batch++) {
        const rows = pushRows(200, `c${clientNo}-b${batch}`, { ids: true })
        try {
          const answer = await pushTo(owner.api, id, rows)
          expect(answer.accepted_rows).toBe(200)
          for (const row of rows) acknowledged.add(row.id!)
        } catch (error) {
          // an answer other than 202 before the kill is a failure of its own
          if (!killed || error instanceof ApiFailure) throw error
          unanswered.push(rows)
          return
        }
      }
    }
    const load = Promise.all([1, 2, 3, 4].map(pushLoop))
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    killed = true
    first.child.kill("SIGKILL")
    await load
    await first.exited
    expect(first.child.signalCode).toBe("SIGKILL")
    expect(acknowledged.size).toBeGreaterThan(0)
    expect(unanswered.length).toBe(4) // each client was cut off mid-request (or refused right after)

    const second = await serveChild(env)
    const api = (await signedIn(at(second.url), "crash-owner")).api
    const stored = await consolidatedIds(api, id)
    expect([...stored].filter(([, n]) => n > 1), "rows stored twice").toEqual([])
    expect([...acknowledged].filter((row) => !stored.has(row)), "acknowledged rows lost").toEqual([])
    // a batch is one transaction: an unanswered one is stored whole or not at all
    const storedOf = unanswered.map((rows) => rows.filter((row) => stored.has(row.id!)).length)
    for (const n of storedOf) expect([0, 200]).toContain(n)
    expect(stored.size).toBe(acknowledged.size + storedOf.reduce((a, b) => a + b, 0))

    // clients retry what got no answer: rows already stored count as duplicates, the rest are stored once
    for (const [i, rows] of unanswered.entries()) {
      expect(await pushTo(api, id, rows)).toMatchObject({ accepted_rows: 200, duplicate_rows: storedOf[i] })
    }
    const after = await consolidatedIds(api, id)
    expect([...after].filter(([, n]) => n > 1), "rows stored twice after retries").toEqual([])
    expect(after.size).toBe(acknowledged.size + 200 * unanswered.length)
  }, 60_000)
})
