import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FineTuneFake, startFineTuneFake } from "./fakes/FineTuneFake.ts"
import { aLeaderboard, apiToken, type SignedIn, signedIn } from "./support/Builders.ts"
import { lastUser, referenceOf } from "./support/Models.ts"
import { type Podium, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

// A model's deployment history end to end: deploys, a rollback and a stop asked by a signed-in
// owner, and the gate of scheduled fine-tunes with auto_update_model, against a loopback server
// speaking OpenAI's fine-tuning API (the fine-tune scheduler looks every second here).

const fineTuneKey = "sk-ft-9b2d4e6f8a10"
let tuner: FineTuneFake
let podium: Podium
let owner: SignedIn
let ownerId: string
let readToken: string
let inferenceToken: string
let base: string

/** The remote job (by creation index) whose tuned model answers wrong, to have the gate keep a version back. */
let worseJob = -1

beforeAll(async () => {
  tuner = await startFineTuneFake({ apiKey: fineTuneKey })
  tuner.answer = (model, messages) => {
    const job = tuner.jobs.findIndex((j) => j.fine_tuned_model === model)
    return job !== -1 && job !== worseJob ? referenceOf(lastUser(messages)) : "no idea"
  }
  podium = await startPodium({
    FINE_TUNE_BASE_URL: tuner.baseUrl,
    FINE_TUNE_API_KEY: fineTuneKey,
    FINE_TUNE_BASE_MODELS: "base-model",
    FINE_TUNE_POLL_INTERVAL_MS: "50",
    FINE_TUNE_SCHEDULER_CRON: "* * * * * *"
  })
  owner = await signedIn(podium, "deployment-history-owner")
  const [user] = await query<{ id: string }>(podium.databaseUrl, (sql) =>
    sql`SELECT id::text AS id FROM users WHERE subject = 'deployment-history-owner'`)
  ownerId = user!.id
  readToken = await apiToken(owner.api, ["models:read"])
  inferenceToken = await apiToken(owner.api, ["models:inference"])
  const bases = (await call("GET", "/api/base-models")).body.base_models as Array<{ id: string; trainer: string }>
  base = bases.find((b) => b.trainer === "openai")!.id
})
afterAll(async () => {
  await podium.stop()
  await tuner.close()
})

const call = (method: string, path: string, json?: unknown, token = owner.session) =>
  podium.request(method, path, json === undefined ? { token } : { token, json })

const pushLeaderboard = async (rows: number) => {
  const { id } = (await owner.api((c) => c.leaderboards.create({ payload: aLeaderboard({ eval_type: "exact" }) }))).leaderboard
  const payload = Array.from({ length: rows }, (_, i) => ({ input: `q${i}`, expected: `a${i}` }))
  await owner.api((c) => c.pushDatasets.push({ params: { leaderboard_id: id }, payload }))
  await owner.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: id } }))
  return id
}

const createModel = async (body: Record<string, unknown>) => {
  const created = await call("POST", "/api/models", { selected_base_model_version_id: base, ...body })
  expect(created.status).toBe(201)
  return created.body.model.id as string
}

const runsOf = async (modelId: string) => (await call("GET", `/api/models/${modelId}/fine-tune/runs`)).body.runs as Array<any>
const versionsOf = async (modelId: string) => (await call("GET", `/api/models/${modelId}/versions`)).body.versions as Array<any>
const statusOf = async (modelId: string, versionId: string) => (await versionsOf(modelId)).find((v) => v.id === versionId)?.deployment_status
const historyOf = async (modelId: string, search = "", token = owner.session) => call("GET", `/api/models/${modelId}/deployment-history${search}`, undefined, token)

const finished = async (modelId: string, runId: string) => {
  await expect.poll(async () => (await runsOf(modelId)).find((r) => r.id === runId)?.status, { timeout: 30_000, interval: 50 })
    .toMatch(/^(succeeded|failed|cancelled)$/)
  return (await runsOf(modelId)).find((r) => r.id === runId)
}

/** A manual fine-tune of the model; answers its version's id. */
const fineTuned = async (modelId: string) => {
  const started = await call("POST", `/api/models/${modelId}/fine-tune/run`)
  expect(started.status).toBe(202)
  const run = await finished(modelId, started.body.run.id)
  expect(run.status).toBe("succeeded")
  return run.version_id as string
}

const deploy = async (modelId: string, versionId: string) => {
  const reply = await call("POST", `/api/models/${modelId}/versions/${versionId}/deploy`, null)
  expect(reply.status).toBe(200)
  await expect.poll(() => statusOf(modelId, versionId), { timeout: 20_000, interval: 50 }).toBe("active")
}

describe("deploys, rollbacks and stops", () => {
  it("are recorded newest first with who asked; a stopped model answers as one with nothing deployed", async () => {
    const modelId = await createModel({ name: "history", leaderboard_ids: [await pushLeaderboard(100)] })
    expect((await historyOf(modelId)).body).toEqual({ data: [], next_cursor: null })
    const v1 = await fineTuned(modelId)
    const v2 = await fineTuned(modelId)

    await deploy(modelId, v1)
    await deploy(modelId, v2)
    expect(await statusOf(modelId, v1)).toBe("stopped")
    // v1 was created before v2: deploying it again is a rollback
    await deploy(modelId, v1)
    expect(await statusOf(modelId, v2)).toBe("stopped")
    const answered = await call("POST", `/v1/models/${modelId}/inference`, { messages: [{ role: "user", content: "q3" }] }, inferenceToken)
    expect(answered.status).toBe(200)
    expect(answered.headers.get("x-service-model-version-id")).toBe(v1)

    // only a session of an owner or admin stops, and only the active version
    expect((await call("POST", `/api/models/${modelId}/versions/${v1}/stop`, undefined, readToken)).status).toBe(401)
    const notActive = await call("POST", `/api/models/${modelId}/versions/${v2}/stop`)
    expect(notActive.status).toBe(409)
    expect(notActive.body.error).toMatchObject({ code: "version_not_deployed", details: { version_id: v2, status: "stopped" } })
    expect((await call("POST", `/api/models/${modelId}/versions/00000000-0000-4000-8000-000000000000/stop`)).status).toBe(404)

    const stopped = await call("POST", `/api/models/${modelId}/versions/${v1}/stop`)
    expect(stopped.status).toBe(200)
    expect(stopped.body.version).toMatchObject({ id: v1, deployment_status: "stopped", inference_url: null })
    const nothing = await call("POST", `/v1/models/${modelId}/inference`, { messages: [{ role: "user", content: "q3" }] }, inferenceToken)
    expect(nothing.status).toBe(409)
    expect(nothing.body.error).toMatchObject({ code: "no_active_deployment", details: { model_id: modelId } })
    const again = await call("POST", `/api/models/${modelId}/versions/${v1}/stop`)
    expect(again.status).toBe(409)
    expect(again.body.error).toMatchObject({ code: "version_not_deployed", details: { version_id: v1, status: "stopped" } })

    const user = { type: "user", id: ownerId }
    const history = await historyOf(modelId, "", readToken)
    expect(history.status).toBe(200)
    expect(history.body.next_cursor).toBeNull()
    const entries = history.body.data as Array<any>
    expect(entries.map((e) => [e.kind, e.from_version_id, e.to_version_id])).toEqual([
      ["stop", v1, null],
      ["rollback", v2, v1],
      ["deploy", v1, v2],
      ["deploy", null, v1]
    ])
    for (const entry of entries) expect(entry).toMatchObject({ model_id: modelId, actor: user, reason: null })
    expect(entries[3].evidence).toEqual({ deployment: { max_workers: 4, active_workers: 0, default_max_new_tokens: 512, idle_timeout: 300 } })
    const times = entries.map((e) => Date.parse(e.at))
    expect([...times].sort((a, b) => b - a)).toEqual(times)

    // pages by cursor
    const first = await historyOf(modelId, "?limit=3")
    expect(first.body.data.map((e: any) => e.id)).toEqual(entries.slice(0, 3).map((e) => e.id))
    expect(first.body.next_cursor).toBe(entries[2].id)
    const second = await historyOf(modelId, `?limit=3&cursor=${first.body.next_cursor}`)
    expect(second.body).toEqual({ data: [entries[3]], next_cursor: null })
    expect((await historyOf(modelId)).body.data).toHaveLength(4)
    for (const bad of ["?limit=0", "?limit=101", "?limit=2.5", "?cursor=nope"]) {
      expect((await historyOf(modelId, bad)).status, bad).toBe(400)
    }
    expect((await historyOf("00000000-0000-4000-8000-000000000000")).status).toBe(404)

    // the rows are immutable
    const id = entries[0].id as string
    await expect(query(podium.databaseUrl, (sql) => sql`UPDATE model_deployment_history SET reason = 'edited' WHERE id = ${id}`))
      .rejects.toThrow()
    await expect(query(podium.databaseUrl, (sql) => sql`DELETE FROM model_deployment_history WHERE id = ${id}`))
      .rejects.toThrow()
    expect((await historyOf(modelId)).body.data).toEqual(entries)
  })
})

/** Makes the model's next scheduled fine-tune due now, as if its time had come. */
const dueNow = (modelId: string) =>
  query(podium.databaseUrl, (sql) => sql`UPDATE models SET next_fine_tune_at = now() - interval '1 second' WHERE id = ${modelId} RETURNING id`)

describe("the fine-tune gate", () => {
  it("records each decision once, as the system acting for its run, with the run's gate as evidence", async () => {
    const modelId = await createModel({ name: "gated", leaderboard_ids: [await pushLeaderboard(100)], auto_update_model: true })
    await call("PATCH", `/api/models/${modelId}`, { fine_tune_schedule: { run: { type: "DAILY" } } })
    const fire = async () => {
      const before = (await runsOf(modelId)).length
      await dueNow(modelId)
      await expect.poll(async () => (await runsOf(modelId)).length, { timeout: 20_000, interval: 50 }).toBe(before + 1)
      const [run] = await runsOf(modelId)
      const done = await finished(modelId, run.id)
      expect(done.status).toBe("succeeded")
      return done
    }
    const first = await fire()
    expect(first.gate.decision).toBe("deploy")
    worseJob = tuner.jobs.length
    const second = await fire()
    expect(second.gate.decision).toBe("keep")

    const entries = (await historyOf(modelId)).body.data as Array<any>
    expect(entries).toHaveLength(2)
    expect(entries[0]).toMatchObject({
      kind: "gate",
      from_version_id: first.version_id,
      to_version_id: null,
      actor: { type: "system", id: "fine_tune_gate", fine_tune_run_id: second.id },
      evidence: second.gate,
      reason: second.gate.reason
    })
    expect(entries[1]).toMatchObject({
      kind: "gate",
      from_version_id: null,
      to_version_id: first.version_id,
      actor: { type: "system", id: "fine_tune_gate", fine_tune_run_id: first.id },
      evidence: first.gate,
      reason: first.gate.reason
    })
    const [stored] = await query<{ n: number }>(podium.databaseUrl, (sql) =>
      sql`SELECT count(*)::int AS n FROM model_deployment_history WHERE model_id = ${modelId}`)
    expect(stored!.n).toBe(2)
  })
})

describe("the gate policy", () => {
  it("shows the defaults until set; a PATCH changes the fields it gives, in range only", async () => {
    const modelId = await createModel({ name: "policy" })
    const defaults = { alpha: 0.05, margin: 0.02, min_rows: 20 }
    expect((await call("GET", `/api/models/${modelId}`)).body.model.gate_policy).toEqual(defaults)
    expect((await call("GET", `/api/models/${modelId}`, undefined, readToken)).body.model.gate_policy).toEqual(defaults)

    const patched = await call("PATCH", `/api/models/${modelId}`, { gate_policy: { margin: 0.05 } })
    expect(patched.status).toBe(200)
    expect(patched.body.model.gate_policy).toEqual({ ...defaults, margin: 0.05 })
    const more = await call("PATCH", `/api/models/${modelId}`, { gate_policy: { alpha: 0.01, min_rows: 50 }, description: "gated" })
    expect(more.body.model).toMatchObject({ description: "gated", gate_policy: { alpha: 0.01, margin: 0.05, min_rows: 50 } })

    const refused: Array<[Record<string, unknown>, string]> = [
      [{ alpha: 0 }, "alpha"],
      [{ alpha: 1 }, "alpha"],
      [{ margin: -0.01 }, "margin"],
      [{ margin: 1 }, "margin"],
      [{ min_rows: 0 }, "min_rows"],
      [{ min_rows: 2.5 }, "min_rows"]
    ]
    for (const [gate_policy, field] of refused) {
      const reply = await call("PATCH", `/api/models/${modelId}`, { gate_policy })
      expect(reply.status, JSON.stringify(gate_policy)).toBe(400)
      expect(reply.body.error.code).toBe("validation_failed")
      expect(JSON.stringify(reply.body.error), JSON.stringify(gate_policy)).toContain(field)
    }
    expect((await call("PATCH", `/api/models/${modelId}`, { gate_policy: { alpha: "high" } })).status).toBe(400)
    const [row] = await query<{ gate_policy: unknown }>(podium.databaseUrl, (sql) =>
      sql`SELECT gate_policy FROM models WHERE id = ${modelId}`)
    expect(row!.gate_policy).toEqual({ alpha: 0.01, margin: 0.05, min_rows: 50 })
    expect((await call("GET", `/api/models/${modelId}`)).body.model.gate_policy).toEqual({ alpha: 0.01, margin: 0.05, min_rows: 50 })
  })
})
