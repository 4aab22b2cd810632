/**
 * A run survives kill -9: `podium serve` runs as a child process asking two slow loopback
 * candidates, is killed with SIGKILL mid-run and started again on the same database, and the run
 * finishes without asking any answered cell again.
 */
import { randomBytes } from "node:crypto"
import { afterAll, describe, expect, it } from "vitest"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import type { RunId } from "@podium/domain/shared"
import { type ModelFake, startModelFake } from "./fakes/ModelFake.ts"
import { aCandidate, aLeaderboard, signedIn } from "./support/Builders.ts"
import type { Caller } from "./support/Client.ts"
import { at, serveChild, stopChildren } from "./support/ChildPodium.ts"
import { freshDatabaseUrl } from "./support/database.ts"
import { sessionSecret } from "./support/Podium.ts"

let fake: ModelFake | undefined
afterAll(async () => {
  stopChildren()
  await fake?.close()
})

const concurrency = 4
const rows = Array.from({ length: 300 }, (_, i) => ({ question: `q${i}`, answer: `a${i}` }))

const runOf = async (api: Caller, leaderboard_id: LeaderboardId, run_id: RunId) =>
  (await api((c) => c.runs.get({ params: { leaderboard_id, run_id } }))).run

describe("kill -9 during a run", () => {
  it("finishes after a restart, asking again only calls that were in flight", async () => {
    fake = await startModelFake()
    fake.delayMs = 30
    fake.models["left"] = (q) => q.replace("q", "a")
    fake.models["right"] = (q) => Number(q.slice(1)) % 3 === 0 ? q.replace("q", "a") : "?"
    fake.files["/rows.jsonl"] = { contentType: "application/jsonl", body: rows.map((r) => JSON.stringify(r)).join("\n") }
    const env = {
      DATABASE_URL: await freshDatabaseUrl(),
      SESSION_JWT_SECRET: sessionSecret,
      SECRETS_KEY: randomBytes(32).toString("hex"),
      ALLOW_PRIVATE_NETWORK_TARGETS: "true",
      RUN_CONCURRENCY: String(concurrency)
    }
    const first = await serveChild(env)
    const owner = await signedIn(at(first.url), "run-crash-owner")
    const { id } = (await owner.api((c) =>
      c.leaderboards.create({
        payload: aLeaderboard({ dataset_type: "GET", dataset_url: `${fake!.url}/rows.jsonl`, eval_type: "exact" })
      })
    )).leaderboard
    for (const model of ["left", "right"]) {
      await owner.api((c) =>
        c.leaderboards.addModel({ params: { leaderboard_id: id }, payload: aCandidate(`${fake!.url}/v1`, { name: model, model_name: model }) })
      )
    }
    const { run } = await owner.api((c) => c.runs.start({ params: { leaderboard_id: id }, payload: null }))

    // 600 cells, four at a time per candidate at 30 ms: ~2.3 s in all; kill a third of the way in
    await expect.poll(async () => (await runOf(owner.api, id, run.id)).progress.completed, { timeout: 30_000, interval: 20 })
      .toBeGreaterThanOrEqual(200)
    first.child.kill("SIGKILL")
    await first.exited
    expect(first.child.signalCode).toBe("SIGKILL")
    const askedBeforeKill = fake.asked.size
    expect(askedBeforeKill).toBeLessThan(600)

    // the new instance takes the run over once the dead one's shard locks are gone: up to their 35 s expiry
    const second = await serveChild(env)
    const api = (await signedIn(at(second.url), "run-crash-owner")).api
    await expect.poll(async () => (await runOf(api, id, run.id)).status, { timeout: 90_000, interval: 250 }).toBe("succeeded")
    const done = await runOf(api, id, run.id)
    expect(done.progress).toEqual({ total: 600, completed: 600, failed: 0 })
    expect(done.results.map((r) => [r.name, r.correct, r.total, r.rank])).toEqual([["left", 300, 300, 1], ["right", 100, 300, 2]])

    // Every cell was asked; a cell is written once, and a chunk run again asks only the rows without
    // one. Asked twice can only be a call in flight at the kill: at most `concurrency` per candidate.
    expect(fake.asked.size).toBe(600)
    const askedAgain = [...fake.asked].filter(([, n]) => n !== 1)
    for (const [key, n] of askedAgain) expect(n, key).toBe(2)
    expect(askedAgain.length, askedAgain.map(([key]) => key).join(", ")).toBeLessThanOrEqual(2 * concurrency)
  }, 150_000)
})
