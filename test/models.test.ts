import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FineTuneFake, startFineTuneFake } from "./fakes/FineTuneFake.ts"
import { type ModelFake, startModelFake } from "./fakes/ModelFake.ts"
import { aCandidate, aLeaderboard, apiToken, type SignedIn, signedIn } from "./support/Builders.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

const routerKey = "sk-or-v1-models-router-key"
const fineTuneKey = "sk-ft-9f3a7c2e41b8"
let fake: ModelFake
let tuner: FineTuneFake
let podium: Podium
let owner: SignedIn

beforeAll(async () => {
  fake = await startModelFake({ key: routerKey })
  fake.files["/api/v1/models"] = {
    contentType: "application/json",
    body: JSON.stringify({ data: [{ id: "acme/small", name: "Acme Small", pricing: { prompt: "0", completion: "0" } }] })
  }
  fake.models["slow"] = (q) => q
  tuner = await startFineTuneFake({ apiKey: fineTuneKey })
  podium = await startPodium({
    ROUTER_BASE_URL: `${fake.url}/api/v1`,
    HUB_BASE_URL: `${fake.url}/hub`,
    FINE_TUNE_BASE_URL: tuner.baseUrl,
    FINE_TUNE_API_KEY: fineTuneKey,
    FINE_TUNE_BASE_MODELS: "gpt-4o-mini-2024-07-18, gpt-4.1-nano-2025-04-14"
  })
  owner = await signedIn(podium, "models-owner")
  await owner.api((c) => c.integrations.validate({ payload: { provider: "router", token: routerKey } }))
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
  await tuner.close()
})

const call = (method: string, path: string, json?: unknown, token = owner.session) =>
  podium.request(method, path, json === undefined ? { token } : { token, json })

/** A PUSH leaderboard whose latest consolidated version has `rows` rows. */
const pushLeaderboard = async (rows: number, overrides: Record<string, unknown> = {}) => {
  const { id } = (await owner.api((c) => c.leaderboards.create({ payload: aLeaderboard({ eval_type: "exact", ...overrides }) }))).leaderboard
  if (rows > 0) {
    const payload = Array.from({ length: rows }, (_, i) => ({ input: `q${i}`, expected: `a${i}` }))
    await owner.api((c) => c.pushDatasets.push({ params: { leaderboard_id: id }, payload }))
    await owner.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: id } }))
  }
  return id
}

describe("models", () => {
  it("are created, listed, read, updated and deleted", async () => {
    const leaderboard = await pushLeaderboard(100)
    const created = await call("POST", "/api/models", { name: "Support bot", description: "answers", leaderboard_ids: [leaderboard] })
    expect(created.status).toBe(201)
    const model = created.body.model
    expect(model).toMatchObject({
      name: "Support bot",
      description: "answers",
      leaderboard_ids: [leaderboard],
      business_id: owner.workspace,
      creation_mode: "fine_tune",
      auto_update_model: false,
      continuous_self_learning: false,
      fine_tune_schedule: null,
      next_fine_tune_at: null
    })
    expect(model.workspace_id).toBeUndefined()

    const listed = await call("GET", "/api/models?limit=1000")
    expect(listed.status).toBe(200)
    expect(listed.body.models.map((m: { id: string }) => m.id)).toContain(model.id)
    expect((await call("GET", `/api/models/${model.id}`)).body.model).toEqual(model)

    const updated = await call("PATCH", `/api/models/${model.id}`, { description: "answers support questions", name: "Support" })
    expect(updated.status).toBe(200)
    expect(updated.body.model).toMatchObject({ name: "Support", description: "answers support questions", leaderboard_ids: [leaderboard] })

    const assigned = await call("GET", `/api/models/${model.id}/leaderboards`)
    expect(assigned.status).toBe(200)
    expect(assigned.body.leaderboards.map((l: { id: string }) => l.id)).toEqual([leaderboard])

    const deleted = await call("DELETE", `/api/models/${model.id}`)
    expect(deleted).toMatchObject({ status: 200, body: { id: model.id, deleted: true } })
    expect((await call("GET", `/api/models/${model.id}`)).status).toBe(404)
    expect((await call("DELETE", `/api/models/${model.id}`)).status).toBe(404)
  })

  it("accept the camelCase aliases of the create request, and refuse a field given both ways differently", async () => {
    const leaderboard = await pushLeaderboard(120)
    const created = await call("POST", "/api/models", {
      name: "aliased",
      modelName: "support-v1",
      leaderboardIds: [leaderboard],
      creationMode: "few_shot",
      autoUpdateModel: true,
      continuousSelfLearning: false,
      hypertuningParameters: true
    })
    expect(created.status).toBe(201)
    expect(created.body.model).toMatchObject({
      model_name: "support-v1",
      leaderboard_ids: [leaderboard],
      creation_mode: "few_shot",
      auto_update_model: true,
      continuous_self_learning: false,
      hypertuning_parameters: true
    })
    const clash = await call("POST", "/api/models", { name: "x", model_name: "a", modelName: "b" })
    expect(clash.status).toBe(400)
    expect(clash.body.error.code).toBe("validation_failed")
    expect((await call("POST", "/api/models", { modelName: "no name" })).status).toBe(400)
    expect((await call("POST", "/api/models", { name: "x", creation_mode: "magic" })).status).toBe(400)
  })

  it("keep the unknown properties of a PATCH and return them; one named like a field of the model changes nothing", async () => {
    // the create request is closed: what it does not name is ignored
    const created = await call("POST", "/api/models", { name: "open object", team: "growth" })
    expect(created.status).toBe(201)
    const model = created.body.model
    expect(model.team).toBeUndefined()
    const path = `/api/models/${model.id}`

    const first = await call("PATCH", path, { color: "blue", nested: { a: 1 } })
    expect(first.status).toBe(200)
    expect(first.body.model).toMatchObject({ id: model.id, name: "open object", color: "blue", nested: { a: 1 } })
    expect((await call("GET", path)).body.model).toEqual(first.body.model)
    const listed = (await call("GET", "/api/models?limit=1000")).body.models.find((m: { id: string }) => m.id === model.id)
    expect(listed).toEqual(first.body.model)

    const shadowing = await call("PATCH", path, {
      id: randomUUID(),
      business_id: randomUUID(),
      workspace_id: randomUUID(),
      fine_tuned: true,
      next_fine_tune_at: "2000-01-01T00:00:00.000Z",
      created_at: "2000-01-01T00:00:00.000Z",
      deleted_at: "2000-01-01T00:00:00.000Z",
      modelName: "aliased, not extra"
    })
    expect(shadowing.status).toBe(200)
    const read = (await call("GET", path)).body.model
    expect(read).toEqual(shadowing.body.model)
    expect(read).toMatchObject({
      id: model.id,
      business_id: owner.workspace,
      fine_tuned: false,
      next_fine_tune_at: null,
      created_at: model.created_at,
      model_name: "aliased, not extra",
      color: "blue",
      nested: { a: 1 }
    })
    expect(read.workspace_id).toBeUndefined()
    expect(read.deleted_at).toBeUndefined()
    expect(read.modelName).toBeUndefined()

    const second = await call("PATCH", path, { color: "red" })
    expect(second.status).toBe(200)
    expect(second.body.model).toMatchObject({ color: "red", nested: { a: 1 }, model_name: "aliased, not extra" })
    expect((await call("GET", path)).body.model).toEqual(second.body.model)
  })

  it("are another workspace's only for that workspace", async () => {
    const created = await call("POST", "/api/models", { name: "private" })
    const stranger = await signedIn(podium, "models-stranger")
    expect((await call("GET", `/api/models/${created.body.model.id}`, undefined, stranger.session)).status).toBe(404)
    expect((await call("GET", "/api/models", undefined, stranger.session)).body.models).toEqual([])
  })

  it("need the models scopes", async () => {
    const reader = await apiToken(owner.api, ["models:read"])
    expect((await call("GET", "/api/models", undefined, reader)).status).toBe(200)
    const refused = await call("POST", "/api/models", { name: "x" }, reader)
    expect(refused.status).toBe(403)
    expect(refused.body.error).toMatchObject({ code: "insufficient_scope", details: { required_scope: "models:write" } })
  })
})

describe("assignment", () => {
  it("needs 100 consolidated rows, or a hub dataset of 100 rows (leaderboard_dataset_min_rows_required)", async () => {
    const small = await pushLeaderboard(99)
    const refused = await call("POST", "/api/models", { name: "small", leaderboard_ids: [small] })
    expect(refused.status).toBe(409)
    expect(refused.body.error).toMatchObject({ code: "leaderboard_dataset_min_rows_required", details: { leaderboard_id: small } })

    const file = (await owner.api((c) =>
      c.leaderboards.create({ payload: aLeaderboard({ dataset_type: "GET", dataset_url: `${fake.url}/data.jsonl` }) })
    )).leaderboard.id
    const fromFile = await call("POST", "/api/models", { name: "file", leaderboard_ids: [file] })
    expect(fromFile.body.error.code).toBe("leaderboard_dataset_min_rows_required")

    // later assignments are held to the same rule
    const model = (await call("POST", "/api/models", { name: "later" })).body.model
    const patched = await call("PATCH", `/api/models/${model.id}`, { leaderboard_ids: [small] })
    expect(patched.status).toBe(409)
    expect(patched.body.error.code).toBe("leaderboard_dataset_min_rows_required")
    expect((await call("GET", "/api/models/00000000-0000-4000-8000-000000000000/leaderboards")).status).toBe(404)
    expect((await call("POST", "/api/models", { name: "ghost", leaderboard_ids: ["00000000-0000-4000-8000-000000000000"] })).status)
      .toBe(404)
  })

  it("accepts a hub dataset the hub reports 100 rows for, and refuses one of 99", async () => {
    const hubDataset = (name: string, rows: number) => {
      fake.files[`/hub/api/datasets/acme/${name}`] = {
        contentType: "application/json",
        body: JSON.stringify({
          id: `acme/${name}`,
          cardData: { dataset_info: { splits: [{ name: "train", num_examples: rows - 20 }, { name: "test", num_examples: 20 }] } }
        })
      }
      return `https://huggingface.co/datasets/acme/${name}`
    }
    const onHub = async (url: string) =>
      (await owner.api((c) => c.leaderboards.create({ payload: aLeaderboard({ dataset_type: "GET", dataset_url: url }) }))).leaderboard.id
    const big = await onHub(hubDataset("tickets", 100))
    const small = await onHub(hubDataset("few", 99))
    const accepted = await call("POST", "/api/models", { name: "hub", leaderboard_ids: [big] })
    expect(accepted.status).toBe(201)
    expect(accepted.body.model.leaderboard_ids).toEqual([big])
    const refused = await call("POST", "/api/models", { name: "hub", leaderboard_ids: [big, small] })
    expect(refused.body.error).toMatchObject({ code: "leaderboard_dataset_min_rows_required", details: { leaderboard_id: small } })
  })

  it("refuses another workspace's leaderboard", async () => {
    const mine = await pushLeaderboard(100)
    const theirs = await signedIn(podium, "models-other-owner")
    const { id } = (await theirs.api((c) => c.leaderboards.create({ payload: aLeaderboard() }))).leaderboard
    const refused = await call("POST", "/api/models", { name: "mixed", leaderboard_ids: [mine, id] })
    expect(refused.status).toBe(404)
  })

  it("refuses a running leaderboard (leaderboard_running_assignment_blocked), at create and later", async () => {
    const id = await pushLeaderboard(100)
    await owner.api((c) =>
      c.leaderboards.addModel({ params: { leaderboard_id: id }, payload: aCandidate(`${fake.url}/v1`, { name: "slow", model_name: "slow" }) })
    )
    fake.delayMs = 200
    try {
      const { run } = await owner.api((c) => c.runs.start({ params: { leaderboard_id: id }, payload: null }))
      const refused = await call("POST", "/api/models", { name: "busy", leaderboard_ids: [id] })
      expect(refused.status).toBe(409)
      expect(refused.body.error).toMatchObject({ code: "leaderboard_running_assignment_blocked", details: { leaderboard_id: id } })
      const model = (await call("POST", "/api/models", { name: "later" })).body.model
      const patched = await call("PATCH", `/api/models/${model.id}`, { leaderboardIds: [id] })
      expect(patched.body.error.code).toBe("leaderboard_running_assignment_blocked")
      await owner.api((c) => c.runs.cancel({ params: { leaderboard_id: id, run_id: run.id } }))
      const after = await call("PATCH", `/api/models/${model.id}`, { leaderboardIds: [id] })
      expect(after.status).toBe(200)
      expect(after.body.model.leaderboard_ids).toEqual([id])
    } finally {
      fake.delayMs = 0
    }
  })
})

describe("base models", () => {
  it("lists the configured fine-tuning models and the router's catalogue, with stable ids", async () => {
    const first = await call("GET", "/api/base-models")
    expect(first.status).toBe(200)
    expect(first.body.base_models.map((m: Record<string, unknown>) => [m.name, m.trainer, m.provider, m.model_name])).toEqual([
      ["gpt-4o-mini-2024-07-18", "openai", "fine_tuning_api", "gpt-4o-mini-2024-07-18"],
      ["gpt-4.1-nano-2025-04-14", "openai", "fine_tuning_api", "gpt-4.1-nano-2025-04-14"],
      ["Acme Small", "few_shot", "router", "acme/small"]
    ])
    const second = await call("GET", "/api/base-models")
    expect(second.body.base_models.map((m: { id: string }) => m.id)).toEqual(first.body.base_models.map((m: { id: string }) => m.id))
    for (const m of first.body.base_models) expect(m.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)

    // a workspace without a router integration sees the configured ones only
    const other = await signedIn(podium, "models-no-router")
    const theirs = await call("GET", "/api/base-models", undefined, other.session)
    expect(theirs.body.base_models.map((m: { trainer: string }) => m.trainer)).toEqual(["openai", "openai"])

    const chosen = first.body.base_models[2].id
    const model = await call("POST", "/api/models", { name: "based", selected_base_model_version_id: chosen })
    expect(model.body.model.selected_base_model_version_id).toBe(chosen)
    const unknown = await call("POST", "/api/models", { name: "x", selected_base_model_version_id: "00000000-0000-4000-8000-000000000000" })
    expect(unknown.status).toBe(400)
  })
})

describe("schedules and continuous learning", () => {
  it("accepts a fine_tune_schedule and shows the next fine-tune; null clears it", async () => {
    const model = (await call("POST", "/api/models", { name: "scheduled" })).body.model
    const before = Date.now()
    const patched = await call("PATCH", `/api/models/${model.id}`, {
      fine_tune_schedule: { run: { type: "WEEKLY" }, dataset: { mode: "LIMIT", limit: { auto: false, rows: 500, algorithm: "WEIGHTED_SHUFFLE" } } }
    })
    expect(patched.status).toBe(200)
    expect(patched.body.model.fine_tune_schedule).toEqual({
      run: { type: "WEEKLY" },
      dataset: { mode: "LIMIT", limit: { auto: false, rows: 500, algorithm: "WEIGHTED_SHUFFLE" } }
    })
    const next = Date.parse(patched.body.model.next_fine_tune_at)
    expect(next - before).toBeGreaterThanOrEqual(7 * 86_400_000 - 1_000)
    expect(next - before).toBeLessThanOrEqual(7 * 86_400_000 + 60_000)
    // an unrelated change keeps the next occurrence
    const again = await call("PATCH", `/api/models/${model.id}`, { description: "d" })
    expect(again.body.model.next_fine_tune_at).toBe(patched.body.model.next_fine_tune_at)

    expect((await call("PATCH", `/api/models/${model.id}`, { fine_tune_schedule: { run: { type: "HOURLY" } } })).status).toBe(400)
    const cleared = await call("PATCH", `/api/models/${model.id}`, { fine_tune_schedule: null })
    expect(cleared.body.model).toMatchObject({ fine_tune_schedule: null, next_fine_tune_at: null })
  })

  it("refuses continuous self-learning before the first successful fine-tune (no_successful_fine_tune)", async () => {
    const created = await call("POST", "/api/models", { name: "eager", continuousSelfLearning: true })
    expect(created.status).toBe(409)
    expect(created.body.error.code).toBe("no_successful_fine_tune")
    const model = (await call("POST", "/api/models", { name: "patient" })).body.model
    const patched = await call("PATCH", `/api/models/${model.id}`, { continuous_self_learning: true })
    expect(patched.status).toBe(409)
    expect(patched.body.error).toMatchObject({ code: "no_successful_fine_tune", details: { model_id: model.id } })
  })
})
