import type { LeaderboardId } from "@podium/domain/leaderboards"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FineTuneFake, startFineTuneFake } from "./fakes/FineTuneFake.ts"
import { type ModelFake, startModelFake } from "./fakes/ModelFake.ts"
import { aLeaderboard, type SignedIn, signedIn } from "./support/Builders.ts"
import { lastUser, referenceOf, routerWithFewShotModel } from "./support/Models.ts"
import { type Podium, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

// Fine-tunes end to end: the `openai` trainer against a loopback server speaking OpenAI's
// fine-tuning API, the `few_shot` trainer against a loopback router. The fine-tune scheduler looks
// every second here (FINE_TUNE_SCHEDULER_CRON), and a remote job every 50 ms.

const routerKey = "sk-or-v1-fine-tunes-router"
const fineTuneKey = "sk-ft-5d0e8b1c77a2"
let fake: ModelFake
let tuner: FineTuneFake
let podium: Podium
let owner: SignedIn
let openaiBase: string
let fewShotBase: string

/** The remote job (by creation index) whose tuned model answers wrong, to test the deployment gate. */
let worseJob = -1

beforeAll(async () => {
  fake = await startModelFake({ key: routerKey })
  routerWithFewShotModel(fake)
  tuner = await startFineTuneFake({ apiKey: fineTuneKey })
  // the base model does not know; a tuned one does (unless it is one of the `worse`)
  tuner.answer = (model, messages) => {
    const job = tuner.jobs.findIndex((j) => j.fine_tuned_model === model)
    return job !== -1 && job !== worseJob ? referenceOf(lastUser(messages)) : "no idea"
  }
  podium = await startPodium({
    ROUTER_BASE_URL: `${fake.url}/api/v1`,
    FINE_TUNE_BASE_URL: tuner.baseUrl,
    FINE_TUNE_API_KEY: fineTuneKey,
    FINE_TUNE_BASE_MODELS: "base-model",
    FINE_TUNE_POLL_INTERVAL_MS: "50",
    FINE_TUNE_SCHEDULER_CRON: "* * * * * *"
  })
  owner = await signedIn(podium, "fine-tunes-owner")
  await owner.api((c) => c.integrations.validate({ payload: { provider: "router", token: routerKey } }))
  const bases = (await call("GET", "/api/base-models")).body.base_models as Array<{ id: string; trainer: string }>
  openaiBase = bases.find((b) => b.trainer === "openai")!.id
  fewShotBase = bases.find((b) => b.trainer === "few_shot")!.id
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
  await tuner.close()
})

const call = (method: string, path: string, json?: unknown) =>
  podium.request(method, path, json === undefined ? { token: owner.session } : { token: owner.session, json })

/** A PUSH leaderboard whose consolidated rows are q{from} … q{from+rows-1} with references a…. */
const pushLeaderboard = async (rows: number) => {
  const { id } = (await owner.api((c) => c.leaderboards.create({ payload: aLeaderboard({ eval_type: "exact" }) }))).leaderboard
  await pushMore(id, 0, rows)
  return id
}
const pushMore = async (id: LeaderboardId, from: number, rows: number) => {
  const payload = Array.from({ length: rows }, (_, i) => ({ input: `q${from + i}`, expected: `a${from + i}` }))
  await owner.api((c) => c.pushDatasets.push({ params: { leaderboard_id: id }, payload }))
  await owner.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: id } }))
}

const createModel = async (body: Record<string, unknown>) => {
  const created = await call("POST", "/api/models", body)
  expect(created.status).toBe(201)
  return created.body.model as { id: string }
}

const runsOf = async (modelId: string) => (await call("GET", `/api/models/${modelId}/fine-tune/runs`)).body.runs as Array<any>

const finished = async (modelId: string, runId: string) => {
  await expect.poll(async () => (await runsOf(modelId)).find((r) => r.id === runId)?.status, { timeout: 30_000, interval: 50 })
    .toMatch(/^(succeeded|failed|cancelled)$/)
  return (await runsOf(modelId)).find((r) => r.id === runId)
}

/** The run's stored examples of a split, as the database holds them. */
const examples = async (runId: string, split: "training" | "held_out") =>
  (await query<{ input: string }>(podium.databaseUrl, (sql) =>
    sql`SELECT input FROM fine_tune_examples WHERE run_id = ${runId} AND split = ${split} ORDER BY idx`)).map((r) => r.input)

const versionsOf = async (modelId: string) => (await call("GET", `/api/models/${modelId}/versions`)).body.versions as Array<any>

/** Makes the model's next scheduled fine-tune due now, as if its time had come. */
const dueNow = (modelId: string) =>
  query(podium.databaseUrl, (sql) => sql`UPDATE models SET next_fine_tune_at = now() - interval '1 second' WHERE id = ${modelId} RETURNING id`)

describe("the openai trainer", () => {
  let modelId: string
  let firstRun: any

  it("uploads the chat training file, creates one job, follows it, measures the held-out rows and makes a version", async () => {
    const leaderboard = await pushLeaderboard(120)
    modelId = (await createModel({ name: "tuned", leaderboard_ids: [leaderboard], selected_base_model_version_id: openaiBase })).id
    const started = await call("POST", `/api/models/${modelId}/fine-tune/run`, {
      dataset_size: { mode: "LIMIT", limit: { auto: false, rows: 100, algorithm: "LAST_N" }, held_out: 0.2 },
      hypertuning_enabled: true
    })
    expect(started.status).toBe(202)
    expect(started.body.run).toMatchObject({ status: "queued", trigger: "manual", trainer: "openai", model_id: modelId })
    expect(started.body.run.artifact).toBeUndefined()

    const run = firstRun = await finished(modelId, started.body.run.id)
    expect(run.status).toBe("succeeded")
    expect(run.dataset).toMatchObject({
      mode: "LIMIT",
      algorithm: "LAST_N",
      limit: 100,
      available_rows: 120,
      training_rows: 80,
      held_out_rows: 20,
      sources: [{ leaderboard_id: leaderboard, dataset_type: "PUSH", version: 1, rows: 120 }]
    })

    // one remote job, carrying the run's id, with hyperparameters for 80 rows
    const jobs = tuner.jobs.filter((j) => j.metadata.podium_run_id === run.id)
    expect(jobs).toHaveLength(1)
    const [job] = jobs
    expect(job).toMatchObject({ model: "base-model", status: "succeeded", suffix: "podium" })
    expect(job!.hyperparameters).toMatchObject({ n_epochs: 5 })

    // the training file: chat JSONL of the newest 100 rows but the 20 held out
    const lines = tuner.files.get(job!.training_file)!.content.trim().split("\n").map((l) => JSON.parse(l))
    expect(lines).toHaveLength(80)
    const trained = lines.map((l) => {
      expect(l.messages).toHaveLength(2)
      expect(l.messages[0].role).toBe("user")
      expect(l.messages[1]).toEqual({ role: "assistant", content: referenceOf(l.messages[0].content) })
      return l.messages[0].content as string
    })
    const heldOut = await examples(run.id, "held_out")
    expect(heldOut).toHaveLength(20)
    expect(trained.filter((q) => heldOut.includes(q))).toEqual([])
    expect([...trained, ...heldOut].sort()).toEqual(Array.from({ length: 100 }, (_, i) => `q${i + 20}`).sort())
    expect(await examples(run.id, "training")).toEqual(trained)

    // measured on the held-out rows: the base model before, the tuned model after
    const askedTuned = tuner.chats.filter((c) => c.model === job!.fine_tuned_model).map((c) => lastUser(c.messages))
    const askedBase = tuner.chats.filter((c) => c.model === "base-model").map((c) => lastUser(c.messages))
    expect(askedTuned.sort()).toEqual([...heldOut].sort())
    expect(askedBase.sort()).toEqual([...heldOut].sort())
    expect(run.metrics.held_out).toEqual({ rows: 20, correct_before: 0, score_before: 0, correct_after: 20, score_after: 1 })
    // every call is traced on the row's leaderboard, under the fine-tune run
    const traced = await call("GET", `/v1/leaderboard/${leaderboard}/traces?format=json&source=fine_tune&run_id=${run.id}&limit=1000`)
    expect(traced.status).toBe(200)
    expect(traced.body.rows).toHaveLength(40)
    expect(new Set(traced.body.rows.map((t: { input: string }) => t.input))).toEqual(new Set(heldOut))
    expect(run.events.map((e: { message: string }) => e.message)).toEqual(
      expect.arrayContaining([expect.stringMatching(/successfully completed/)])
    )
    expect(run.remote).toMatchObject({ job_id: job!.id, status: "succeeded" })

    const versions = await versionsOf(modelId)
    expect(versions).toHaveLength(1)
    expect(versions[0]).toMatchObject({
      id: run.version_id,
      model_id: modelId,
      fine_tune_run_id: run.id,
      trainer: "openai",
      base_model: { id: openaiBase, model_name: "base-model" },
      deployment_status: "none",
      inference_url: null
    })
    expect(versions[0].metrics.held_out.score_after).toBe(1)
    // where the version lives (the tuned model's name) is never shown
    const shown = (await call("GET", `/api/models/${modelId}/versions`)).text + (await call("GET", `/api/models/${modelId}/fine-tune/runs`)).text
    expect(shown).not.toContain(job!.fine_tuned_model!)
    expect(shown).not.toContain(fineTuneKey)

    const model = (await call("GET", `/api/models/${modelId}`)).body.model
    expect(model.fine_tuned).toBe(true)
  })

  it("keeps versions immutable: no route changes one, the database refuses to, and later fine-tunes leave it be", async () => {
    const [version] = await versionsOf(modelId)
    for (const method of ["PUT", "PATCH", "DELETE", "POST"]) {
      const reply = await call(method, `/api/models/${modelId}/versions/${version.id}`, { metrics: {} })
      expect(reply.status).toBeGreaterThanOrEqual(400)
    }
    await expect(query(podium.databaseUrl, (sql) => sql`UPDATE model_versions SET metrics = '{}' WHERE id = ${version.id}`)).rejects
      .toThrow()
    const again = await call("POST", `/api/models/${modelId}/fine-tune/run`, null)
    expect(again.status).toBe(202)
    expect((await finished(modelId, again.body.run.id)).status).toBe("succeeded")
    const versions = await versionsOf(modelId)
    expect(versions).toHaveLength(2)
    expect(versions.find((v) => v.id === version.id)).toEqual(version)
  })

  it("is deployed by an owner or admin of the model's workspace only", async () => {
    const [version] = await versionsOf(modelId)
    const path = `/api/models/${modelId}/versions/${version.id}/deploy`
    for (const [role, status] of [["member", 403], ["admin", 200]] as const) {
      await owner.api((c) => c.invites.invite({ payload: { email: `deploy-${role}@example.com`, role } }))
      const invitee = await signedIn(podium, `deploy-${role}`, { email: `deploy-${role}@example.com` })
      const reply = await podium.request("POST", path, { token: invitee.session, json: {} })
      expect(reply.status).toBe(status)
      if (status === 403) expect(reply.body.error.code).toBe("forbidden")
    }
    await expect.poll(async () => (await versionsOf(modelId)).find((v) => v.id === version.id).deployment_status, { timeout: 20_000 })
      .toBe("active")
  })

  it("syncs a run with its remote job on request", async () => {
    tuner.mode = "hold"
    try {
      const started = await call("POST", `/api/models/${modelId}/fine-tune/run`)
      const runId = started.body.run.id
      await expect.poll(() => tuner.jobs.find((j) => j.metadata.podium_run_id === runId)?.status, { timeout: 20_000, interval: 20 })
        .toBe("running")
      const synced = await call("POST", `/api/models/${modelId}/fine-tune/sync`)
      expect(synced.status).toBe(200)
      expect(synced.body.run).toMatchObject({ id: runId, status: "running", remote: { status: "running" } })
      tuner.finish(tuner.jobs.find((j) => j.metadata.podium_run_id === runId)!.id)
      const after = await call("POST", `/api/models/${modelId}/fine-tune/sync`, { run_id: runId })
      expect(after.body.run.remote.status).toBe("succeeded")
      expect((await finished(modelId, runId)).status).toBe("succeeded")
      expect((await call("POST", `/api/models/${modelId}/fine-tune/sync`, { run_id: firstRun.model_id })).status).toBe(404)
    } finally {
      tuner.mode = "auto"
    }
  })

  it("fails a run whose remote job fails, with the job's reason, and one at a time per model", async () => {
    tuner.mode = "fail"
    try {
      const started = await call("POST", `/api/models/${modelId}/fine-tune/run`)
      const second = await call("POST", `/api/models/${modelId}/fine-tune/run`)
      expect(second.status).toBe(409)
      expect(second.body.error).toMatchObject({ code: "fine_tune_in_progress", details: { run_id: started.body.run.id } })
      const run = await finished(modelId, started.body.run.id)
      expect(run).toMatchObject({ status: "failed", version_id: null })
      expect(run.error).toMatch(/failed/)
    } finally {
      tuner.mode = "auto"
    }
  })

  it("cancels the remote job when the model is deleted while it trains", async () => {
    const leaderboard = (await call("GET", `/api/models/${modelId}`)).body.model.leaderboard_ids[0]
    const { id } = await createModel({ name: "short-lived", leaderboard_ids: [leaderboard], selected_base_model_version_id: openaiBase })
    tuner.mode = "hold"
    try {
      const started = await call("POST", `/api/models/${id}/fine-tune/run`)
      const job = () => tuner.jobs.find((j) => j.metadata.podium_run_id === started.body.run.id)
      await expect.poll(() => job()?.status, { timeout: 20_000, interval: 20 }).toBe("running")
      expect((await call("DELETE", `/api/models/${id}`)).status).toBe(200)
      await expect.poll(() => job()?.status, { timeout: 20_000, interval: 50 }).toBe("cancelled")
      const [run] = await query<{ status: string; error: string }>(podium.databaseUrl, (sql) =>
        sql`SELECT status, error FROM fine_tune_runs WHERE id = ${started.body.run.id}`)
      expect(run).toEqual({ status: "cancelled", error: "the model was deleted" })
    } finally {
      tuner.mode = "auto"
    }
  })

  it("turns continuous self-learning on after a success, and fine-tunes again when new rows are consolidated", async () => {
    const patched = await call("PATCH", `/api/models/${modelId}`, { continuous_self_learning: true })
    expect(patched.status).toBe(200)
    const before = (await runsOf(modelId)).length
    const [leaderboard] = patched.body.model.leaderboard_ids
    await pushMore(leaderboard, 1000, 5)
    await expect.poll(async () => (await runsOf(modelId)).length, { timeout: 20_000, interval: 100 }).toBe(before + 1)
    const [run] = await runsOf(modelId)
    expect(run.trigger).toBe("continuous")
    expect((await finished(modelId, run.id)).status).toBe("succeeded")
    expect((await finished(modelId, run.id)).dataset.sources[0].version).toBe(2)
    // nothing new: no further run
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    expect((await runsOf(modelId)).length).toBe(before + 1)
    await call("PATCH", `/api/models/${modelId}`, { continuous_self_learning: false })
  })
})

describe("synthetic data", () => {
  it("has the leaderboard's judge model write the references rows lack (create_synthetic_data)", async () => {
    fake.models["writer"] = (q) => `${referenceOf(q)} (written)`
    const { id: leaderboard } = (await owner.api((c) =>
      c.leaderboards.create({ payload: aLeaderboard({ eval_type: "exact", judge_provider: "router", judge_model: "writer" }) })
    )).leaderboard
    const unlabelled = Array.from({ length: 100 }, (_, i) => ({ input: `q${5000 + i}` }))
    await owner.api((c) => c.pushDatasets.push({ params: { leaderboard_id: leaderboard }, payload: unlabelled }))
    await owner.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: leaderboard } }))
    const { id } = await createModel({ name: "synthetic", leaderboard_ids: [leaderboard], selected_base_model_version_id: openaiBase })

    // without synthetic data there is nothing to learn from
    const bare = await call("POST", `/api/models/${id}/fine-tune/run`)
    const failed = await finished(id, bare.body.run.id)
    expect(failed).toMatchObject({ status: "failed", dataset: null })
    expect(failed.error).toMatch(/0 rows with an input and a reference/)

    const started = await call("POST", `/api/models/${id}/fine-tune/run`, { create_synthetic_data: true })
    const run = await finished(id, started.body.run.id)
    expect(run.status).toBe("succeeded")
    expect(run.dataset).toMatchObject({ synthetic_rows: 100, available_rows: 100, training_rows: 90, held_out_rows: 10 })
    const job = tuner.jobs.find((j) => j.metadata.podium_run_id === run.id)!
    const lines = tuner.files.get(job.training_file)!.content.trim().split("\n").map((l) => JSON.parse(l))
    for (const line of lines) expect(line.messages[1].content).toBe(`${referenceOf(line.messages[0].content)} (written)`)
  })
})

describe("the few_shot trainer", () => {
  it("chooses demonstrations through the router's base model and reports the held-out score before and after", async () => {
    const leaderboard = await pushLeaderboard(100)
    const { id } = await createModel({ name: "prompted", leaderboard_ids: [leaderboard], selected_base_model_version_id: fewShotBase })
    const started = await call("POST", `/api/models/${id}/fine-tune/run`, { dataset_size: { held_out: 0.2 } })
    expect(started.status).toBe(202)
    const run = await finished(id, started.body.run.id)
    expect(run).toMatchObject({ status: "succeeded", trainer: "few_shot", remote: null })
    expect(run.dataset).toMatchObject({ algorithm: "LAST_N", training_rows: 80, held_out_rows: 20 })
    expect(run.metrics).toMatchObject({
      kind: "prompt_program",
      selection: { validation_rows: 20, demonstrations: 4 },
      held_out: { rows: 20, score_before: 0, score_after: 1 }
    })
    // every held-out row was asked with no demonstrations and with the chosen ones, and none is a demonstration
    const heldOut = await examples(run.id, "held_out")
    expect(heldOut).toHaveLength(20)
    const asked = fake.seen.filter((s) => s.path.endsWith("/chat/completions") && s.body?.model === "acme/small")
    for (const question of heldOut) {
      const shown = asked.filter((s) => lastUser(s.body.messages) === question)
      expect(shown.some((s) => s.body.messages.length === 1)).toBe(true)
      expect(shown.some((s) => s.body.messages.length === 9)).toBe(true)
      for (const s of asked) expect(s.body.messages.slice(0, -1).map((m: { content: string }) => m.content)).not.toContain(question)
    }
    const [version] = await versionsOf(id)
    expect(version).toMatchObject({ trainer: "few_shot", fine_tune_run_id: run.id, base_model: { model_name: "acme/small" } })
    // the program itself (its demonstrations) is never shown
    expect(JSON.stringify(version)).not.toContain('"assistant"')
    expect(JSON.stringify(version)).not.toContain('"messages"')
  })

  it("scores held-out answers on a judge leaderboard by its judge, asked at temperature 0 for its JSON verdict", async () => {
    const between = (text: string, tag: string) => text.split(`<${tag}>\n`)[1]?.split(`\n</${tag}>`)[0]
    fake.models["grader"] = (q) =>
      JSON.stringify({ verdict: between(q, "answer") === between(q, "reference") ? "correct" : "incorrect", reason: "compared" })
    const { id: leaderboard } = (await owner.api((c) =>
      c.leaderboards.create({ payload: aLeaderboard({ eval_type: "judge", judge_provider: "router", judge_model: "grader" }) }))).leaderboard
    await pushMore(leaderboard, 0, 100)
    const { id } = await createModel({ name: "judged", leaderboard_ids: [leaderboard], selected_base_model_version_id: fewShotBase })
    const started = await call("POST", `/api/models/${id}/fine-tune/run`, { dataset_size: { held_out: 0.2 } })
    const run = await finished(id, started.body.run.id)
    expect(run.metrics).toMatchObject({ held_out: { rows: 20, score_before: 0, score_after: 1 } })
    const judged = fake.seen.filter((s) => s.path.endsWith("/chat/completions") && s.body?.model === "grader")
    // 20 validation rows per program tried, 20 held-out rows before and after
    expect(judged.length).toBeGreaterThanOrEqual(60)
    for (const request of judged) {
      expect(request.body.temperature).toBe(0)
      expect(request.body.response_format).toMatchObject({ type: "json_schema", json_schema: { name: "verdict" } })
    }
  })

  it("fails with a clear reason when the model has nothing to learn from", async () => {
    const { id } = await createModel({ name: "empty", selected_base_model_version_id: fewShotBase })
    const refused = await call("POST", `/api/models/${id}/fine-tune/run`)
    expect(refused.status).toBe(409)
    expect(refused.body.error.code).toBe("no_training_data")
    const unbased = await createModel({ name: "no base", leaderboard_ids: [await pushLeaderboard(100)] })
    expect((await call("POST", `/api/models/${unbased.id}/fine-tune/run`)).body.error.code).toBe("base_model_unavailable")
  })
})

describe("scheduled fine-tunes and the deployment gate", () => {
  it("fire when due (trigger schedule), and auto_update_model deploys a version only if it is non-inferior on the same held-out rows", async () => {
    const leaderboard = await pushLeaderboard(200)
    const { id } = await createModel({
      name: "self-updating",
      leaderboard_ids: [leaderboard],
      selected_base_model_version_id: openaiBase,
      auto_update_model: true
    })
    // 200 rows, 10% held out: every version is measured on 20 held-out rows
    const scheduled = await call("PATCH", `/api/models/${id}`, {
      fine_tune_schedule: { run: { type: "DAILY" }, dataset: { mode: "LIMIT", limit: { auto: false, rows: 200, algorithm: "WEIGHTED_SHUFFLE" } } }
    })
    expect(Date.parse(scheduled.body.model.next_fine_tune_at) - Date.now()).toBeGreaterThan(86_000_000)
    expect(scheduled.body.model.gate_policy).toEqual({ alpha: 0.05, margin: 0.02, min_rows: 20 })

    const fire = async () => {
      const before = (await runsOf(id)).length
      await dueNow(id)
      await expect.poll(async () => (await runsOf(id)).length, { timeout: 20_000, interval: 50 }).toBe(before + 1)
      const [run] = await runsOf(id)
      expect(run.trigger).toBe("schedule")
      const done = await finished(id, run.id)
      expect(done.status).toBe("succeeded")
      // the next occurrence is a day on
      const model = (await call("GET", `/api/models/${id}`)).body.model
      expect(Date.parse(model.next_fine_tune_at) - Date.now()).toBeGreaterThan(86_000_000)
      return done
    }
    const statuses = async () => (await versionsOf(id)).map((v) => v.deployment_status)

    // 1: nothing deployed yet: deploy
    const first = await fire()
    expect(first.dataset).toMatchObject({ algorithm: "WEIGHTED_SHUFFLE", limit: 200, training_rows: 180, held_out_rows: 20 })
    expect(first.gate).toMatchObject({
      decision: "deploy",
      reason: "no version was deployed",
      deployed_score: null,
      deployed_version_id: null,
      candidate_score: 1,
      shared_rows: 0,
      p_value: null,
      difference: null,
      policy: { alpha: 0.05, margin: 0.02, min_rows: 20 }
    })
    expect(await statuses()).toEqual(["active"])
    expect((await versionsOf(id))[0].inference_url).toMatch(new RegExp(`^http.*/v1/models/${id}/versions/${first.version_id}/inference$`))

    // 2: a version wrong on all 20 rows the deployed one gets right is kept back, significantly worse:
    // p = scipy.stats.binomtest(0, 20, 0.5).pvalue = 2 · 0.5^20 = 1.9073486328125e-06
    worseJob = tuner.jobs.length
    const second = await fire()
    expect(second.gate).toMatchObject({
      decision: "keep",
      candidate_score: 0,
      deployed_score: 1,
      deployed_version_id: first.version_id,
      shared_rows: 20,
      wins: 0,
      losses: 20,
      p_value: 1.9073486328125e-6,
      difference: { estimate: -1 }
    })
    expect(second.gate.reason).toBe(
      "kept the deployed version: the new version is significantly worse: wrong on 20 rows where the deployed one is right " +
        "and right on 0 where it is wrong, p < 0.0001 (alpha 0.05) on 20 shared held-out rows"
    )
    expect((await versionsOf(id)).map((v) => [v.id, v.deployment_status])).toEqual([[second.version_id, "none"], [first.version_id, "active"]])

    // 3: as good as the deployed one (both right on all 20 rows), but under the defaults 20 rows cannot show
    // non-inferiority: Newcombe's interval is 0 ± (1 − 20/(20 + z²)) = ±0.16112515805281935 (z = norm.ppf(0.975)),
    // whose lower end is not above −0.02, so the deployed version stays
    const equal = { estimate: 0, low: -0.16112515805281935, high: 0.16112515805281935 }
    const third = await fire()
    expect(third.gate).toMatchObject({ decision: "keep", candidate_score: 1, deployed_score: 1, shared_rows: 20, wins: 0, losses: 0, p_value: 1 })
    expect(third.gate.difference.low).toBeCloseTo(equal.low, 12)
    expect(third.gate.difference.high).toBeCloseTo(equal.high, 12)
    expect(third.gate.reason).toBe(
      "kept the deployed version: the new version may be worse by more than the margin: difference 0, interval [-0.161, 0.161], " +
        "lower bound not above -0.02, on 20 shared held-out rows"
    )
    expect(await statuses()).toEqual(["none", "none", "active"])

    // 4: with the margin widened to 0.2 (above 0.171, the widest such interval's half-width on 20 rows) the equal version deploys
    const widened = await call("PATCH", `/api/models/${id}`, { gate_policy: { margin: 0.2 } })
    expect(widened.body.model.gate_policy).toEqual({ alpha: 0.05, margin: 0.2, min_rows: 20 })
    const fourth = await fire()
    expect(fourth.gate).toMatchObject({
      decision: "deploy",
      candidate_score: 1,
      deployed_score: 1,
      deployed_version_id: first.version_id,
      shared_rows: 20,
      wins: 0,
      losses: 0,
      p_value: 1,
      policy: { alpha: 0.05, margin: 0.2, min_rows: 20 }
    })
    expect(fourth.gate.difference.low).toBeCloseTo(equal.low, 12)
    expect(fourth.gate.reason).toBe(
      "deployed the new version: non-inferior (difference 0, interval [-0.161, 0.161], lower bound above -0.2) and not " +
        "significantly worse (p = 1) on 20 shared held-out rows"
    )
    expect(await statuses()).toEqual(["active", "none", "none", "stopped"])

    // manual fine-tunes are not gated nor deployed
    const manual = await call("POST", `/api/models/${id}/fine-tune/run`)
    const done = await finished(id, manual.body.run.id)
    expect(done.gate).toBeNull()
    expect((await versionsOf(id))[0].deployment_status).toBe("none")

    // a gate stored before the paired statistics were recorded (scores only) is still read and shown as stored
    const old = { candidate_score: 0, deployed_score: 1, deployed_version_id: first.version_id, decision: "keep", reason: "the new version scores lower than the deployed one" }
    await query(podium.databaseUrl, (sql) => sql`UPDATE fine_tune_runs SET gate = ${sql.json(old)} WHERE id = ${second.id} RETURNING id`)
    expect((await runsOf(id)).find((r) => r.id === second.id).gate).toEqual(old)
  })
})
