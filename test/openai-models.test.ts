import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FineTuneFake, startFineTuneFake } from "./fakes/FineTuneFake.ts"
import { aLeaderboard, apiToken, type SignedIn, signedIn } from "./support/Builders.ts"
import { caller, deployedModel } from "./support/Models.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

// GET /v1/models and GET /v1/models/{id} through the official `openai` package: what an API token
// may call, in OpenAI's list shape; refusals in Podium's error body.

const fineTuneKey = "sk-ft-3c9a51e07d2b"
let tuner: FineTuneFake
let podium: Podium
let owner: SignedIn
let call: ReturnType<typeof caller>
let modelId: string
/** The deployed model's leaderboard, one made after it, and one archived: created in this order. */
let modelLeaderboard: string
let liveLeaderboard: string
let archivedLeaderboard: string
/** A model of the workspace with no deployment: never listed. */
let undeployedModel: string
let otherLeaderboard: string

const openai = (apiKey: string) => new OpenAI({ baseURL: `${podium.url}/v1`, apiKey, maxRetries: 0 })
const ids = async (apiKey: string) => {
  const page = await openai(apiKey).models.list()
  return page.data.map((m) => m.id)
}

beforeAll(async () => {
  tuner = await startFineTuneFake({ apiKey: fineTuneKey })
  tuner.answer = (model, messages) => model.startsWith("ft:") ? `tuned: ${messages.at(-1)!.content}` : "base"
  podium = await startPodium({
    FINE_TUNE_BASE_URL: tuner.baseUrl,
    FINE_TUNE_API_KEY: fineTuneKey,
    FINE_TUNE_BASE_MODELS: "base-model",
    FINE_TUNE_POLL_INTERVAL_MS: "50"
  })
  owner = await signedIn(podium, "openai-models-owner")
  call = caller(podium, owner)
  ;({ leaderboard: modelLeaderboard, modelId } = await deployedModel(podium, owner))
  const create = async (name: string) =>
    (await owner.api((c) => c.leaderboards.create({ payload: aLeaderboard({ name }) }))).leaderboard.id as string
  liveLeaderboard = await create("live")
  archivedLeaderboard = await create("archived")
  expect((await call("PATCH", `/api/leaderboards/${archivedLeaderboard}`, { status: "archived" })).status).toBe(200)
  const bases = (await call("GET", "/api/base-models")).body.base_models as Array<{ id: string; trainer: string }>
  const created = await call("POST", "/api/models", {
    name: "never deployed",
    leaderboard_ids: [modelLeaderboard],
    selected_base_model_version_id: bases.find((b) => b.trainer === "openai")!.id
  })
  expect(created.status).toBe(201)
  undeployedModel = created.body.model.id
  const stranger = await signedIn(podium, "openai-models-stranger")
  otherLeaderboard = (await stranger.api((c) => c.leaderboards.create({ payload: aLeaderboard({ name: "theirs" }) }))).leaderboard.id
}, 90_000)
afterAll(async () => {
  await podium?.stop()
  await tuner?.close()
})

describe("GET /v1/models through the openai package", () => {
  it("lists a leaderboard token's active leaderboards, oldest first, in OpenAI's model shape", async () => {
    const token = await apiToken(owner.api, ["leaderboards:inference"])
    const page = await openai(token).models.list()
    expect(page.data.map((m) => m.id)).toEqual([`leaderboard/${modelLeaderboard}`, `leaderboard/${liveLeaderboard}`])
    const leaderboard = (await call("GET", `/api/leaderboards/${liveLeaderboard}`)).body.leaderboard
    const live = page.data[1]!
    expect(live).toEqual({
      id: `leaderboard/${liveLeaderboard}`,
      object: "model",
      created: Math.floor(Date.parse(leaderboard.created_at) / 1000),
      owned_by: owner.workspace
    })
    const raw = await podium.request("GET", "/v1/models", { token })
    expect(raw.body.object).toBe("list")
  })

  it("lists a model token's models with an active deployment only", async () => {
    const token = await apiToken(owner.api, ["models:inference"])
    expect(await ids(token)).toEqual([`model/${modelId}`])
    expect(await ids(token)).not.toContain(`model/${undeployedModel}`)
  })

  it("lists both for a token with both scopes, and for a session", async () => {
    const both = [`leaderboard/${modelLeaderboard}`, `leaderboard/${liveLeaderboard}`, `model/${modelId}`]
    expect(await ids(await apiToken(owner.api, ["leaderboards:inference", "models:inference"]))).toEqual(both)
    expect(await ids(owner.session)).toEqual(both)
  })

  it("refuses a token with neither scope: 403 insufficient_scope naming both", async () => {
    const token = await apiToken(owner.api, ["leaderboards:read", "models:read"])
    const error = await openai(token).models.list().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError)
    const raw = await podium.request("GET", "/v1/models", { token })
    expect(raw.status).toBe(403)
    expect(raw.body.error).toMatchObject({
      code: "insufficient_scope",
      details: { accepted_scopes: ["leaderboards:inference", "models:inference"] }
    })
  })
})

describe("GET /v1/models/{id}", () => {
  it("retrieves a leaderboard and a model through the openai package (the slash sent as %2F)", async () => {
    const token = await apiToken(owner.api, ["leaderboards:inference", "models:inference"])
    const leaderboard = await openai(token).models.retrieve(`leaderboard/${liveLeaderboard}`)
    expect(leaderboard).toMatchObject({ id: `leaderboard/${liveLeaderboard}`, object: "model", owned_by: owner.workspace })
    const model = await openai(token).models.retrieve(`model/${modelId}`)
    expect(model).toMatchObject({ id: `model/${modelId}`, object: "model", owned_by: owner.workspace })
  })

  it("answers the same on the two slash paths", async () => {
    const token = await apiToken(owner.api, ["leaderboards:inference", "models:inference"])
    const listed = (await podium.request("GET", "/v1/models", { token })).body.data
    const byLeaderboard = await podium.request("GET", `/v1/models/leaderboard/${liveLeaderboard}`, { token })
    expect(byLeaderboard.status).toBe(200)
    expect(byLeaderboard.body).toEqual(listed[1])
    const byModel = await podium.request("GET", `/v1/models/model/${modelId}`, { token })
    expect(byModel.body).toEqual(listed[2])
    expect((await podium.request("GET", `/v1/models/leaderboard%2F${liveLeaderboard.toUpperCase()}`, { token })).body)
      .toEqual(listed[1])
  })

  it("is 404 for another workspace's leaderboard, an unknown id, an archived leaderboard and an undeployed model", async () => {
    const token = await apiToken(owner.api, ["leaderboards:inference", "models:inference"])
    const notFound = [
      `leaderboard/${otherLeaderboard}`,
      `leaderboard/${crypto.randomUUID()}`,
      `model/${crypto.randomUUID()}`,
      `leaderboard/${archivedLeaderboard}`,
      `model/${undeployedModel}`
    ]
    for (const id of notFound) {
      await expect(openai(token).models.retrieve(id), id).rejects.toBeInstanceOf(OpenAI.NotFoundError)
      const raw = await podium.request("GET", `/v1/models/${id}`, { token })
      expect(raw.status, id).toBe(404)
      expect(raw.body.error.code, id).toBe("not_found")
    }
  })

  it("needs the kind's scope: 403 naming it", async () => {
    const token = await apiToken(owner.api, ["leaderboards:inference"])
    const encoded = await podium.request("GET", `/v1/models/model%2F${modelId}`, { token })
    expect(encoded.status).toBe(403)
    expect(encoded.body.error).toMatchObject({ code: "insufficient_scope", details: { required_scope: "models:inference" } })
    const path = await podium.request("GET", `/v1/models/model/${modelId}`, { token })
    expect(path.status).toBe(403)
    expect(path.body.error).toMatchObject({ code: "insufficient_scope", details: { required_scope: "models:inference" } })
  })

  it("is 400 for an id that is neither leaderboard/{uuid} nor model/{uuid}", async () => {
    const token = await apiToken(owner.api, ["leaderboards:inference"])
    const raw = await podium.request("GET", "/v1/models/gpt-4o", { token })
    expect(raw.status).toBe(400)
    expect(raw.body.error.code).toBe("validation_failed")
  })

  it("leaves model inference on /v1/models/{id}/chat/completions to the model", async () => {
    const token = await apiToken(owner.api, ["models:inference"])
    const answer = await new OpenAI({ baseURL: `${podium.url}/v1/models/${modelId}`, apiKey: token, maxRetries: 0 })
      .chat.completions.create({ model: "ignored", messages: [{ role: "user", content: "hi" }] })
    expect(answer.choices[0]!.message.content).toBe("tuned: hi")
  })
})
