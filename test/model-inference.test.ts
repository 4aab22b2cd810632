import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FineTuneFake, startFineTuneFake } from "./fakes/FineTuneFake.ts"
import { type ModelFake, startModelFake } from "./fakes/ModelFake.ts"
import { aLeaderboard, apiToken, type SignedIn, signedIn } from "./support/Builders.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

// Deployment, model inference and inference logs: versions made by fine-tunes against the loopback
// fine-tuning service (openai) and router (few_shot), deployed, then called through every path.

const routerKey = "sk-or-v1-model-inference-router"
const fineTuneKey = "sk-ft-3e7a9c1d5b20"
let fake: ModelFake
let tuner: FineTuneFake
let podium: Podium
let owner: SignedIn
let inferenceToken: string
let readToken: string
let bases: Array<{ id: string; trainer: string }>

const referenceOf = (question: string) => question.replace(/^q/, "a")
const lastUser = (messages: ReadonlyArray<{ role: string; content: string }>) => messages.findLast((m) => m.role === "user")?.content ?? ""

beforeAll(async () => {
  fake = await startModelFake({ key: routerKey })
  fake.files["/api/v1/models"] = {
    contentType: "application/json",
    body: JSON.stringify({ data: [{ id: "acme/small", name: "Acme Small", pricing: { prompt: "0", completion: "0" } }] })
  }
  fake.models["acme/small"] = (q, body) =>
    (body.messages as Array<{ role: string }>).some((m) => m.role === "assistant") ? referenceOf(q) : "no idea"
  tuner = await startFineTuneFake({ apiKey: fineTuneKey })
  tuner.answer = (model, messages) => model.startsWith("ft:") ? `${model.slice(-4)} says ${referenceOf(lastUser(messages))}` : "no idea"
  podium = await startPodium({
    ROUTER_BASE_URL: `${fake.url}/api/v1`,
    FINE_TUNE_BASE_URL: tuner.baseUrl,
    FINE_TUNE_API_KEY: fineTuneKey,
    FINE_TUNE_BASE_MODELS: "base-model",
    FINE_TUNE_POLL_INTERVAL_MS: "50"
  })
  owner = await signedIn(podium, "model-inference-owner")
  await owner.api((c) => c.integrations.validate({ payload: { provider: "router", token: routerKey } }))
  inferenceToken = await apiToken(owner.api, ["models:inference"])
  readToken = await apiToken(owner.api, ["models:read"])
  bases = (await call("GET", "/api/base-models")).body.base_models
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
  await tuner.close()
})

const call = (method: string, path: string, json?: unknown, token = owner.session) =>
  podium.request(method, path, json === undefined ? { token } : { token, json })

const ask = (path: string, content = "q7", token = inferenceToken) => call("POST", path, { messages: [{ role: "user", content }] }, token)

/** A model of a 100-row PUSH leaderboard with the `trainer`'s base model. */
const aModel = async (trainer: "openai" | "few_shot") => {
  const { id: leaderboard } = (await owner.api((c) => c.leaderboards.create({ payload: aLeaderboard({ eval_type: "exact" }) }))).leaderboard
  const payload = Array.from({ length: 100 }, (_, i) => ({ input: `q${i}`, expected: `a${i}` }))
  await owner.api((c) => c.pushDatasets.push({ params: { leaderboard_id: leaderboard }, payload }))
  await owner.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: leaderboard } }))
  const base = bases.find((b) => b.trainer === trainer)!.id
  const created = await call("POST", "/api/models", { name: `${trainer} model`, leaderboard_ids: [leaderboard], selected_base_model_version_id: base })
  return created.body.model.id as string
}

/** Fine-tunes the model once; answers the new version's id. */
const fineTuned = async (modelId: string) => {
  const started = await call("POST", `/api/models/${modelId}/fine-tune/run`)
  await expect.poll(async () => {
    const runs = (await call("GET", `/api/models/${modelId}/fine-tune/runs`)).body.runs as Array<{ id: string; status: string }>
    return runs.find((r) => r.id === started.body.run.id)?.status
  }, { timeout: 30_000, interval: 50 }).toBe("succeeded")
  return (await call("GET", `/api/models/${modelId}/versions`)).body.versions[0].id as string
}

const versionOf = async (modelId: string, versionId: string) =>
  ((await call("GET", `/api/models/${modelId}/versions`)).body.versions as Array<any>).find((v) => v.id === versionId)

const deployed = async (modelId: string, versionId: string, options: Record<string, number> | null = null) => {
  const reply = await call("POST", `/api/models/${modelId}/versions/${versionId}/deploy`, options)
  expect(reply.status).toBe(200)
  expect(reply.body.version).toMatchObject({ id: versionId, deployment_status: "deploying" })
  await expect.poll(async () => (await versionOf(modelId, versionId)).deployment_status, { timeout: 20_000, interval: 50 })
    .toBe("active")
  return versionOf(modelId, versionId)
}

describe("deployment and model inference", () => {
  let modelId: string
  let first: string

  it("answers 409 before a successful fine-tune, and before a deployment", async () => {
    modelId = await aModel("openai")
    const early = await ask(`/v1/models/${modelId}/inference`)
    expect(early.status).toBe(409)
    expect(early.body.error.code).toBe("no_successful_fine_tune")
    first = await fineTuned(modelId)
    const undeployed = await ask(`/v1/models/${modelId}/inference`)
    expect(undeployed.status).toBe(409)
    expect(undeployed.body.error).toMatchObject({ code: "no_active_deployment", details: { model_id: modelId } })
    const exact = await ask(`/v1/models/${modelId}/versions/${first}/inference`)
    expect(exact.body.error.code).toBe("no_active_deployment")
    expect((await ask(`/v1/models/${modelId}/versions/00000000-0000-4000-8000-000000000000/inference`)).status).toBe(404)
  })

  it("deploys only for a session of an owner or admin, with options in the spec's ranges", async () => {
    const path = `/api/models/${modelId}/versions/${first}/deploy`
    expect((await call("POST", path, {}, inferenceToken)).status).toBe(401)
    for (const bad of [{ max_workers: 0 }, { max_workers: 101 }, { default_max_new_tokens: 4097 }, { idle_timeout: 0 }, { max_workers: 2, active_workers: 3 }]) {
      const refused = await call("POST", path, bad)
      expect(refused.status).toBe(400)
    }
    expect((await versionOf(modelId, first)).deployment_status).toBe("none")
    const version = await deployed(modelId, first, { max_workers: 2, active_workers: 1, default_max_new_tokens: 64, idle_timeout: 60 })
    expect(version).toMatchObject({
      deployment: { max_workers: 2, active_workers: 1, default_max_new_tokens: 64, idle_timeout: 60 },
      deployment_error: null
    })
    expect(version.inference_url).toMatch(new RegExp(`/v1/models/${modelId}/versions/${first}/inference$`))
    const again = await call("POST", path, null)
    expect(again.status).toBe(409)
    expect(again.body.error).toMatchObject({ code: "version_deployed", details: { status: "active" } })
  })

  it("serves through every path with the X-Service-Model headers, and logs each call", async () => {
    for (const path of [
      `/v1/models/${modelId}/inference`,
      `/api/models/${modelId}/inference`,
      `/v1/models/${modelId}/chat/completions`,
      `/v1/models/${modelId}/versions/${first}/inference`,
      `/api/models/${modelId}/versions/${first}/inference`
    ]) {
      const served = await ask(path)
      expect(served.status).toBe(200)
      expect(served.body.choices[0].message.content).toMatch(/says a7$/)
      expect(served.headers.get("x-service-model-id")).toBe(modelId)
      expect(served.headers.get("x-service-model-version-id")).toBe(first)
      expect(served.headers.get("x-service-model-message-id")).toMatch(/^[0-9a-f-]{36}$/)
    }
    // the caller's messages go as sent
    expect(tuner.chats.at(-1)!.messages).toEqual([{ role: "user", content: "q7" }])

    expect((await ask(`/v1/models/${modelId}/inference`, "q7", readToken)).status).toBe(403)
    await expect.poll(async () => (await call("GET", `/api/models/${modelId}/inference/logs`, undefined, readToken)).body.logs.length, {
      timeout: 5_000,
      interval: 50
    }).toBe(5)
    const { logs } = (await call("GET", `/api/models/${modelId}/inference/logs?limit=2`, undefined, readToken)).body
    expect(logs).toHaveLength(2)
    expect(logs[0]).toMatchObject({
      input_message: { messages: [{ role: "user", content: "q7" }] },
      metadata: { status: "success", version_id: first, trainer: "openai" }
    })
    expect(logs[0].output_messages.messages[0].content).toMatch(/says a7$/)
    const text = JSON.stringify(logs)
    expect(text).not.toContain(fineTuneKey)
    expect(text).not.toMatch(/ft:base-model/)
    expect((await call("GET", `/api/models/${modelId}/inference/logs?limit=101`, undefined, readToken)).status).toBe(400)
  })

  it("replaces the deployed version with a newer deployment of the same model", async () => {
    const second = await fineTuned(modelId)
    await deployed(modelId, second)
    expect((await versionOf(modelId, first)).deployment_status).toBe("stopped")
    const served = await ask(`/v1/models/${modelId}/inference`)
    expect(served.headers.get("x-service-model-version-id")).toBe(second)
    const old = await ask(`/v1/models/${modelId}/versions/${first}/inference`)
    expect(old.status).toBe(409)
    expect(old.body.error.code).toBe("no_active_deployment")
  })

  it("marks a deployment failed when the version does not answer", async () => {
    const version = await fineTuned(modelId)
    const job = tuner.jobs.at(-1)!
    const answer = tuner.answer
    tuner.answer = (model, messages) => {
      if (model === job.fine_tuned_model) throw new Error("gone")
      return answer(model, messages)
    }
    try {
      const reply = await call("POST", `/api/models/${modelId}/versions/${version}/deploy`)
      expect(reply.status).toBe(200)
      await expect.poll(async () => (await versionOf(modelId, version)).deployment_status, { timeout: 30_000, interval: 100 })
        .toBe("failed")
      expect((await versionOf(modelId, version)).deployment_error).toMatch(/did not answer/)
    } finally {
      tuner.answer = answer
    }
  })

  it("serves a few_shot version here: the router's base model with the demonstrations in front", async () => {
    const id = await aModel("few_shot")
    const version = await fineTuned(id)
    await deployed(id, version)
    const served = await ask(`/v1/models/${id}/inference`, "q42")
    expect(served.status).toBe(200)
    expect(served.body.choices[0].message.content).toBe("a42")
    const sent = fake.seen.filter((s) => s.path.endsWith("/chat/completions")).at(-1)!
    expect(lastUser(sent.body.messages)).toBe("q42")
    expect(sent.body.messages.length).toBe(9)
    // the deployment's default_max_new_tokens applies to calls that set none
    expect(sent.body.max_tokens).toBe(512)
  })
})
