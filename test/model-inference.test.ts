import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { type FineTuneFake, startFineTuneFake } from "./fakes/FineTuneFake.ts"
import { type ModelFake, startModelFake } from "./fakes/ModelFake.ts"
import {
  aCandidate,
  aCase,
  aHumanLeaderboard,
  aLeaderboard,
  apiToken,
  createCase,
  generate,
  humanLeaderboard,
  type NewCandidate,
  servingLeaderboard,
  type SignedIn,
  signedIn
} from "./support/Builders.ts"
import { expectError, expectValidation } from "./support/Client.ts"
import { deployedModel, lastUser, referenceOf, routerWithFewShotModel } from "./support/Models.ts"
import { type Podium, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

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


beforeAll(async () => {
  fake = await startModelFake({ key: routerKey })
  routerWithFewShotModel(fake)
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
    expect(served.body.model).toBe("few_shot model")
    const sent = fake.seen.filter((s) => s.path.endsWith("/chat/completions")).at(-1)!
    expect(sent.body.model).toBe("acme/small")
    expect(lastUser(sent.body.messages)).toBe("q42")
    expect(sent.body.messages.length).toBe(9)
    // the deployment's default_max_new_tokens applies to calls that set none
    expect(sent.body.max_tokens).toBe(512)
  })
})

describe("model inference takes leaderboard inference's requests, and answers in the model's name", () => {
  let modelId: string
  let version: string
  let leaderboardToken: string
  let leaderboardId: string
  const paths = () => [
    `/v1/models/${modelId}/inference`,
    `/api/models/${modelId}/inference`,
    `/v1/models/${modelId}/chat/completions`,
    `/v1/models/${modelId}/versions/${version}/inference`,
    `/api/models/${modelId}/versions/${version}/inference`
  ]
  const infer = (path: string, json: unknown) => call("POST", path, json, inferenceToken)

  beforeAll(async () => {
    ;({ modelId, versionId: version } = await deployedModel(podium, owner, "openai"))
    leaderboardToken = await apiToken(owner.api, ["leaderboards:inference"])
    leaderboardId = (await servingLeaderboard(owner.api, aCandidate(`${fake.url}/v1`, { name: "partly", model_name: "partly" }))).id
  }, 60_000)

  it("sends input, prompt, question or query as the user's message, on every path", async () => {
    for (const path of paths()) {
      for (const field of ["input", "prompt", "question", "query"]) {
        const served = await infer(path, { [field]: "q7" })
        expect(served.status, `${field} on ${path}`).toBe(200)
        expect(tuner.chats.at(-1)!.messages, `${field} on ${path}`).toEqual([{ role: "user", content: "q7" }])
        expect(served.body.choices[0].message.content).toMatch(/says a7$/)
      }
    }
  })

  it("lets messages win over the text fields, as leaderboard inference does", async () => {
    for (const path of paths()) {
      expect((await infer(path, { messages: [{ role: "user", content: "q8" }], input: "q1", query: "q2" })).status).toBe(200)
      expect(tuner.chats.at(-1)!.messages, path).toEqual([{ role: "user", content: "q8" }])
      // empty messages are no input: the one text field is
      expect((await infer(path, { messages: [], prompt: "q9" })).status).toBe(200)
      expect(tuner.chats.at(-1)!.messages, path).toEqual([{ role: "user", content: "q9" }])
    }
  })

  it("refuses a request with no input, or two, with leaderboard inference's 400", async () => {
    const asked = tuner.chats.length
    for (const payload of [{}, { messages: [] }, { input: "a", prompt: "b" }, { temperature: 0.5 }]) {
      const leaderboard = await call("POST", `/v1/leaderboard/${leaderboardId}/inference`, payload, leaderboardToken)
      expect(leaderboard.status).toBe(400)
      for (const path of paths()) {
        const refused = await infer(path, payload)
        expect(refused.status, `${JSON.stringify(payload)} on ${path}`).toBe(400)
        expect(refused.body.error.code).toBe(leaderboard.body.error.code)
        expect(refused.body.error.message).toBe(leaderboard.body.error.message)
        expect(refused.body.error.details).toEqual(leaderboard.body.error.details)
      }
    }
    expect(tuner.chats.length).toBe(asked)
  })

  it("answers with the Podium model's name, not where the version lives, and logs as before", async () => {
    const { name } = (await call("GET", `/api/models/${modelId}`)).body.model
    for (const path of paths()) {
      const served = await infer(path, { input: "q3" })
      expect(served.status).toBe(200)
      expect(served.body.model, path).toBe(name)
      expect(served.text).not.toMatch(/ft:base-model/)
    }
    const tuned = tuner.jobs.at(-1)!.fine_tuned_model!
    expect(tuner.chats.at(-1)!.model).toBe(tuned)
    // the log keeps the provider's answer, with where the version lives redacted
    await expect.poll(async () => {
      const { logs } = (await call("GET", `/api/models/${modelId}/inference/logs?limit=5`, undefined, readToken)).body
      return logs.map((log: any) => JSON.parse(log.traces.response.body).model)
    }, { timeout: 5_000, interval: 50 }).toEqual(Array(5).fill("[version]"))
  })

  it("answers an answer Postgres cannot store unchanged and logs it with U+FFFD, holding no later log", async () => {
    const answer = tuner.answer
    tuner.answer = (model, messages) => lastUser(messages) === "poison" ? "nul \u0000 lone \ud800 end" : answer(model, messages)
    try {
      const poisoned = await infer(`/v1/models/${modelId}/inference`, { input: "poison" })
      expect(poisoned.status).toBe(200)
      expect(poisoned.body.choices[0].message.content).toBe("nul \u0000 lone \ud800 end")
      expect((await infer(`/v1/models/${modelId}/inference`, { input: "q5" })).status).toBe(200)
      const logged = (input: string) =>
        query(podium.databaseUrl, (sql) =>
          sql<{ output: string }>`SELECT output_messages->'messages'->0->>'content' AS output FROM model_inference_logs
            WHERE model_id = ${modelId} AND input_message->'messages'->0->>'content' = ${input}`)
      await expect.poll(async () => (await logged("q5")).length, { timeout: 10_000, interval: 50 }).toBeGreaterThan(0)
      expect((await logged("poison")).map((row) => row.output)).toEqual(["nul \uFFFD lone \uFFFD end"])
    } finally {
      tuner.answer = answer
    }
  })
})

describe("Service candidates: a model's deployed version competes on leaderboards", () => {
  // few_shot versions answer here through the router's acme/small, which is right whenever it is shown
  // demonstrations; the Custom candidate "partly" is right on q1 … q6 only
  const questions = Array.from({ length: 10 }, (_, i) => ({ input: `q${i + 1}`, expected: `a${i + 1}` }))
  let served: string
  let idle: string
  let inferToken: string

  const service = (modelId: string, name = "our model"): NewCandidate => ({ name, platform: "Service", model_id: modelId })
  const partly = () => aCandidate(`${fake.url}/v1`, { name: "partly", model_name: "partly" })

  const logCount = async (modelId: string) =>
    ((await call("GET", `/api/models/${modelId}/inference/logs?limit=100`, undefined, readToken)).body.logs as Array<unknown>).length

  const runLeaderboard = async (candidates: ReadonlyArray<NewCandidate>) => {
    const { id } = (await owner.api((c) =>
      c.leaderboards.create({
        payload: aLeaderboard({ name: "service run", dataset_type: "GET", dataset_url: `${fake.url}/service-questions.jsonl`, eval_type: "exact" })
      })
    )).leaderboard
    const ids: Array<string> = []
    for (const candidate of candidates) {
      ids.push((await owner.api((c) => c.leaderboards.addModel({ params: { leaderboard_id: id }, payload: candidate }))).model.id)
    }
    return { id, ids }
  }

  const runToEnd = async (id: LeaderboardId) => {
    const { run } = await owner.api((c) => c.runs.start({ params: { leaderboard_id: id }, payload: null }))
    const get = () => owner.api((c) => c.runs.get({ params: { leaderboard_id: id, run_id: run.id } }))
    await expect.poll(async () => (await get()).run.status, { timeout: 30_000, interval: 50 }).not.toMatch(/^(queued|running)$/)
    const done = (await get()).run
    const { rows } = await owner.api((c) => c.runs.results({ params: { leaderboard_id: id, run_id: run.id }, query: { limit: 100 } }))
    return { done, rows }
  }

  beforeAll(async () => {
    fake.models["partly"] = (q) => Number(q.slice(1)) <= 6 ? referenceOf(q) : "no idea"
    fake.files["/service-questions.jsonl"] = {
      contentType: "application/jsonl",
      body: questions.map((r) => JSON.stringify(r)).join("\n")
    }
    inferToken = await apiToken(owner.api, ["leaderboards:inference"])
  })

  it("has a few_shot model deployed, and another fine-tuned but not deployed", async () => {
    served = await aModel("few_shot")
    await deployed(served, await fineTuned(served))
    idle = await aModel("few_shot")
    await fineTuned(idle)
    expect((await ask(`/v1/models/${idle}/inference`)).body.error.code).toBe("no_active_deployment")
  }, 120_000)

  it("a run scores a Custom candidate and a Service candidate alike, and the Service candidate can win", async () => {
    const before = await logCount(served)
    const { id, ids: [custom, ours] } = await runLeaderboard([partly(), service(served)])
    const { done, rows } = await runToEnd(id)
    expect(done.status).toBe("succeeded")
    expect(done.progress).toEqual({ total: 20, completed: 20, failed: 0 })
    expect(done.winner_leaderboard_model_id).toBe(ours)
    expect(done.results.map((r) => [r.leaderboard_model_id, r.correct, r.total, r.errors])).toEqual([[ours, 10, 10, 0], [custom, 6, 10, 0]])
    expect(done.results[0]!.latency_ms_p50).not.toBeNull()
    for (const row of rows) {
      const answer = row.results.find((r) => r.leaderboard_model_id === ours)!
      expect(answer).toMatchObject({ output: row.reference, verdict: "correct", error: null })
      expect(answer.latency_ms).toEqual(expect.any(Number))
    }
    // each answer is a call of the model's version, in its inference log
    await expect.poll(() => logCount(served), { timeout: 5_000, interval: 50 }).toBe(before + 10)

    // the winner serves the leaderboard at once, through the model
    const reply = await podium.request("POST", `/v1/leaderboard/${id}/inference`, { token: inferToken, json: { input: "q3" } })
    expect(reply.status).toBe(200)
    expect(reply.headers.get("x-service-leaderboard-model-id")).toBe(ours)
    expect(reply.headers.get("x-service-model-source")).toBe("Service")
    expect(reply.body.choices[0].message.content).toBe("a3")
  })

  it("leaderboard inference served by a Service candidate answers with the model's deployed version, traced and logged", async () => {
    const { candidate, id } = await servingLeaderboard(owner.api, service(served))
    const before = await logCount(served)
    const reply = await podium.request("POST", `/v1/leaderboard/${id}/inference`, { token: inferToken, json: { input: "q42" } })
    expect(reply.status).toBe(200)
    expect(reply.body.choices[0].message.content).toBe("a42")
    // in the model's name, as model inference answers (not the router's base model the version lives on)
    expect(reply.body.model).toBe("few_shot model")
    expect(reply.headers.get("x-service-model-source")).toBe("Service")
    expect(reply.headers.get("x-service-leaderboard-model-id")).toBe(candidate)
    // the version's demonstrations go in front; max_tokens is the deployment's default
    const sent = fake.seen.filter((s) => s.path.endsWith("/chat/completions")).at(-1)!
    expect(sent.body.model).toBe("acme/small")
    expect(lastUser(sent.body.messages)).toBe("q42")
    expect(sent.body.messages.length).toBeGreaterThan(1)
    expect(sent.body.max_tokens).toBe(512)

    // the newest log once it is written (the test before's last log may still land after `before` is counted)
    const newest = async () => (await call("GET", `/api/models/${served}/inference/logs?limit=1`, undefined, readToken)).body.logs[0]
    await expect.poll(async () => lastUser((await newest())?.input_message.messages ?? []), { timeout: 5_000, interval: 50 }).toBe("q42")
    expect(await newest()).toMatchObject({ input_message: { messages: [{ role: "user", content: "q42" }] }, metadata: { status: "success", trace_id: null } })
    expect(await logCount(served)).toBeGreaterThanOrEqual(before + 1)

    // traced as the leaderboard's call (the log names no trace: the model's own inference path did not trace it again)
    const traceId = reply.headers.get("x-service-trace-id")!
    await expect.poll(async () => (await query(podium.databaseUrl, (sql) => sql`SELECT id FROM traces WHERE id = ${traceId}`)).length, {
      timeout: 5_000,
      interval: 25
    }).toBe(1)
    const [trace] = await query(podium.databaseUrl, (sql) =>
      sql`SELECT leaderboard_id::text AS leaderboard, leaderboard_model_id::text AS candidate, source, status, output
          FROM traces WHERE id = ${traceId}`)
    expect(trace).toEqual({ leaderboard: id, candidate, source: "inference", status: "success", output: "a42" })
  })

  it("a Service candidate whose model has no active deployment fails like any failing candidate", async () => {
    const { candidate, id } = await servingLeaderboard(owner.api, service(idle, "idle model"))
    const reply = await podium.request("POST", `/v1/leaderboard/${id}/inference`, { token: inferToken, json: { input: "q1" } })
    expect(reply.status).toBe(502)
    expect(reply.body.error).toMatchObject({ code: "upstream_error", details: { candidate_id: candidate, candidate_name: "idle model" } })
    expect(reply.body.error.message).toMatch(/no active deployment/)
    const traceId = String(reply.body.error.details.trace_id)
    await expect.poll(async () => (await query(podium.databaseUrl, (sql) => sql`SELECT id FROM traces WHERE id = ${traceId}`)).length, {
      timeout: 5_000,
      interval: 25
    }).toBe(1)
    const [trace] = await query(podium.databaseUrl, (sql) => sql`SELECT status, error FROM traces WHERE id = ${traceId}`)
    expect(trace).toMatchObject({ status: "error", error: expect.stringMatching(/no active deployment/) })

    const { id: board, ids: [custom, ours] } = await runLeaderboard([partly(), service(idle, "idle model")])
    const { done, rows } = await runToEnd(board)
    expect(done.status).toBe("succeeded")
    expect(done.winner_leaderboard_model_id).toBe(custom)
    expect(done.results.find((r) => r.leaderboard_model_id === ours)).toMatchObject({ correct: 0, total: 10, errors: 10 })
    for (const row of rows) {
      expect(row.results.find((r) => r.leaderboard_model_id === ours)).toMatchObject({
        output: null,
        verdict: "incorrect",
        error: expect.stringMatching(/no active deployment/)
      })
    }
    // nothing was called, so nothing was logged
    expect(await logCount(idle)).toBe(0)
  })

  it("human evaluation asks a Service candidate through its model", async () => {
    const { id } = await humanLeaderboard(owner.api, [service(served), service(idle, "idle model")], aHumanLeaderboard())
    const before = await logCount(served)
    const caseId = (await createCase(owner.api, id, aCase({ input: "q5" }))).body.id
    const answered = await generate(owner.api, id, caseId)
    expect(answered.responses.map((r) => r.status).sort()).toEqual(["failed", "succeeded"])
    expect(answered.responses.find((r) => r.status === "succeeded")!.output).toBe("a5")
    await expect.poll(() => logCount(served), { timeout: 5_000, interval: 50 }).toBe(before + 1)
  })

  it("refuses a Service candidate of another workspace's model, or of no model", async () => {
    const stranger = await signedIn(podium, "model-inference-stranger")
    const { id } = (await stranger.api((c) => c.leaderboards.create({ payload: aLeaderboard() }))).leaderboard
    const add = (api: typeof owner.api, leaderboard_id: LeaderboardId, modelId: string) =>
      api((c) => c.leaderboards.addModel({ params: { leaderboard_id }, payload: service(modelId) }))
    await expectValidation(add(stranger.api, id, served), ["payload", "model_id"], "another workspace's model")
    const mine = (await owner.api((c) => c.leaderboards.create({ payload: aLeaderboard() }))).leaderboard.id
    await expectValidation(add(owner.api, mine, randomUUID()), ["payload", "model_id"], "no model")
    expect((await owner.api((c) => c.leaderboards.get({ params: { leaderboard_id: mine } }))).models).toEqual([])
    await expectError(add(stranger.api, mine, served), 404, "not_found", "another workspace's leaderboard")
    expect((await add(owner.api, mine, served)).model).toMatchObject({ platform: "Service", model_id: served })
  })
})
