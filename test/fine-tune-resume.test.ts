/**
 * A fine-tune survives kill -9: `podium serve` runs as a child process and is killed with SIGKILL
 * at the worst moment, after the fine-tuning service created the job but before its answer
 * arrived (so the job's id was never recorded), then started again on the same database. The run
 * finds that job by the run id it carries (no second job) and finishes with its version.
 */
import { randomBytes } from "node:crypto"
import { afterAll, describe, expect, it } from "vitest"
import { type FineTuneFake, startFineTuneFake } from "./fakes/FineTuneFake.ts"
import { aLeaderboard, signedIn } from "./support/Builders.ts"
import { at, serveChild, stopChildren } from "./support/ChildPodium.ts"
import { freshDatabaseUrl } from "./support/database.ts"
import { request, session, sessionSecret } from "./support/Podium.ts"

const fineTuneKey = "sk-ft-0c9b2a7e13f4"
let tuner: FineTuneFake | undefined
afterAll(async () => {
  stopChildren()
  await tuner?.close()
})

describe("kill -9 during a fine-tune", () => {
  it("finds the remote job a killed server created but never heard of, and follows it to the end", async () => {
    tuner = await startFineTuneFake({ apiKey: fineTuneKey })
    tuner.createDelayMs = 600_000
    tuner.answer = (model, messages) => model.startsWith("ft:") ? messages.findLast((m) => m.role === "user")!.content.replace("q", "a") : "?"
    const env = {
      DATABASE_URL: await freshDatabaseUrl(),
      SESSION_JWT_SECRET: sessionSecret,
      SECRETS_KEY: randomBytes(32).toString("hex"),
      ALLOW_PRIVATE_NETWORK_TARGETS: "true",
      FINE_TUNE_BASE_URL: tuner.baseUrl,
      FINE_TUNE_API_KEY: fineTuneKey,
      FINE_TUNE_BASE_MODELS: "base-model",
      FINE_TUNE_POLL_INTERVAL_MS: "50"
    }
    const first = await serveChild(env)
    const owner = await signedIn(at(first.url), "fine-tune-crash-owner")
    const token = await session("fine-tune-crash-owner")
    const call = (url: string, method: string, path: string, json?: unknown) =>
      request(url, method, path, json === undefined ? { token } : { token, json })

    const { id: leaderboard } = (await owner.api((c) => c.leaderboards.create({ payload: aLeaderboard({ eval_type: "exact" }) })))
      .leaderboard
    const rows = Array.from({ length: 100 }, (_, i) => ({ input: `q${i}`, expected: `a${i}` }))
    await owner.api((c) => c.pushDatasets.push({ params: { leaderboard_id: leaderboard }, payload: rows }))
    await owner.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: leaderboard } }))
    const [base] = (await call(first.url, "GET", "/api/base-models")).body.base_models
    const model = (await call(first.url, "POST", "/api/models", {
      name: "crash",
      leaderboard_ids: [leaderboard],
      selected_base_model_version_id: base.id
    })).body.model
    const run = (await call(first.url, "POST", `/api/models/${model.id}/fine-tune/run`)).body.run

    await expect.poll(() => tuner!.createdJobs, { timeout: 30_000, interval: 20 }).toBe(1)
    first.child.kill("SIGKILL")
    await first.exited
    expect(tuner.files.size).toBe(1)

    tuner.createDelayMs = 0
    const second = await serveChild(env)
    const runOf = async () =>
      ((await call(second.url, "GET", `/api/models/${model.id}/fine-tune/runs`)).body.runs as Array<any>).find((r) => r.id === run.id)
    await expect.poll(async () => (await runOf())?.status, { timeout: 60_000, interval: 100 }).toBe("succeeded")
      .catch((error) => {
        throw new Error(`${error}\n--- the restarted server said:\n${second.output()}`)
      })
    expect(tuner.createdJobs).toBe(1)
    expect(tuner.files.size).toBe(1)
    const finished = await runOf()
    expect(finished.remote.job_id).toBe(tuner.jobs[0]!.id)
    expect(finished.metrics.held_out).toMatchObject({ rows: 10, score_before: 0, score_after: 1 })
    const versions = (await call(second.url, "GET", `/api/models/${model.id}/versions`)).body.versions
    expect(versions.map((v: { fine_tune_run_id: string }) => v.fine_tune_run_id)).toEqual([run.id])
  }, 180_000)
})
