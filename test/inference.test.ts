import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { completion, type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

let fake: OpenAiFake
let podium: Podium
let owner: string
let serving: string // an API token with leaderboards:inference

beforeAll(async () => {
  fake = await startOpenAiFake()
  podium = await startPodium({
    ROUTER_BASE_URL: `${fake.url}/router/api/v1`,
    HUB_BASE_URL: `${fake.url}/hub`,
    PROVIDER_TIMEOUT_MS: "500"
  })
  owner = await session("inference-owner")
  serving = (await podium.request("POST", "/api/tokens", {
    token: owner,
    json: { name: "serving", scopes: ["leaderboards:inference"] }
  })).body.secret
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

const leaderboard = async (json: Record<string, unknown> = {}) =>
  (await podium.request("POST", "/api/leaderboards", {
    token: owner,
    json: { name: "support", dataset_type: "PUSH", ...json }
  })).body.leaderboard.id as string
const candidate = async (id: string, json: Record<string, unknown>) =>
  (await podium.request("POST", `/api/leaderboards/${id}/models`, { token: owner, json })).body.model.id as string
const choose = (id: string, candidateId: string, strategy = "manual") =>
  podium.request("PATCH", `/api/leaderboards/${id}`, {
    token: owner,
    json: { chosen_model_strategy: strategy, chosen_leaderboard_model_id: candidateId }
  })
const infer = (id: string, json: Record<string, unknown>, token = serving) =>
  podium.request("POST", `/v1/leaderboard/${id}/inference`, { token, json })

/** Traces are written just after the response (group commit): poll until the row is there. */
const traceOf = async (traceId: string) => {
  await expect.poll(async () =>
    (await query(podium.databaseUrl, (sql) => sql`SELECT id FROM traces WHERE id = ${traceId}`)).length, {
    timeout: 5_000,
    interval: 25
  }).toBe(1)
  const [row] = await query(podium.databaseUrl, (sql) =>
    sql`SELECT leaderboard_model_id::text AS candidate, source, status, input, messages, output, error, latency_ms,
               usage, cost_usd, token_id::text AS token_id FROM traces WHERE id = ${traceId}`)
  return row!
}

describe("inference through the chosen model", () => {
  it("calls the manual choice with the challenge's prompts and returns the upstream JSON unchanged", async () => {
    const id = await leaderboard({ system_prompt: "Answer briefly.", model_prompt: "Customer asks: {input}" })
    const chosen = await candidate(id, {
      name: "small",
      platform: "Router",
      model_name: "openai/gpt-4o-mini",
      token: "sk-or-candidate",
      input_price_per_m_tokens: 0.15,
      output_price_per_m_tokens: 0.6
    })
    await candidate(id, { name: "other", platform: "Hub", model_name: "meta/llama" })
    await choose(id, chosen)

    const reply = await infer(id, { question: "Where is my parcel?", temperature: 0.2, max_tokens: 64 })
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual(completion("echo: Customer asks: Where is my parcel?", "openai/gpt-4o-mini"))
    expect(reply.text).toBe(fake.sent.at(-1)) // byte for byte
    expect(reply.headers.get("content-type")).toMatch(/^application\/json/)
    expect(reply.headers.get("x-service-leaderboard-model-id")).toBe(chosen)
    expect(reply.headers.get("x-service-model-source")).toBe("Router")
    const sent = fake.seen.at(-1)!
    expect(sent.path).toBe("/router/api/v1/chat/completions")
    expect(sent.headers.authorization).toBe("Bearer sk-or-candidate")
    expect(sent.body).toEqual({
      model: "openai/gpt-4o-mini",
      messages: [
        { role: "system", content: "Answer briefly." },
        { role: "user", content: "Customer asks: Where is my parcel?" }
      ],
      temperature: 0.2,
      max_tokens: 64
    })

    const trace = await traceOf(reply.headers.get("x-service-trace-id")!)
    expect(trace).toMatchObject({
      candidate: chosen,
      source: "inference",
      status: "success",
      input: "Where is my parcel?",
      output: "echo: Customer asks: Where is my parcel?",
      error: null,
      usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 }
    })
    expect(trace["cost_usd"]).toBeCloseTo(0.00045, 10)
    expect(trace["token_id"]).not.toBeNull()
  })

  it("ranking_winner before any ranking: the chosen candidate, else the only one, else 409 saying how to choose", async () => {
    const id = await leaderboard()
    const none = await infer(id, { input: "hi" })
    expect(none.status).toBe(409)
    expect(none.body.error.code).toBe("no_serving_model")
    const only = await candidate(id, { name: "custom", platform: "Custom", url: `${fake.url}/custom/v1`, auth_type: "header", auth_header_name: "X-Api-Key", token: "custom-key" })
    const alone = await infer(id, { messages: [{ role: "user", content: "hi" }] })
    expect(alone.status, alone.text).toBe(200)
    expect(alone.headers.get("x-service-leaderboard-model-id")).toBe(only)
    expect(alone.headers.get("x-service-model-source")).toBe("Custom")
    expect(fake.seen.at(-1)).toMatchObject({ path: "/custom/v1/chat/completions", headers: { "x-api-key": "custom-key" } })
    expect(fake.seen.at(-1)!.headers.authorization).toBeUndefined()

    const second = await candidate(id, { name: "second", platform: "Custom", url: `${fake.url}/second/v1` })
    const two = await infer(id, { input: "hi" })
    expect(two.status).toBe(409)
    expect(two.body.error.code).toBe("no_serving_model")
    expect(two.body.error.message).toContain("chosen_leaderboard_model_id")
    await choose(id, second, "ranking_winner")
    const chosen = await infer(id, { input: "hi" })
    expect(chosen.status).toBe(200)
    expect(chosen.headers.get("x-service-leaderboard-model-id")).toBe(second)
  })

  it("messages win over input, prompt, question and query sent alongside", async () => {
    const id = await leaderboard()
    await choose(id, await candidate(id, { name: "custom", platform: "Custom", url: `${fake.url}/both/v1` }))
    const reply = await infer(id, { messages: [{ role: "user", content: "from messages" }], input: "from input", query: "q" })
    expect(reply.status, reply.text).toBe(200)
    expect(fake.seen.at(-1)!.body.messages).toEqual([{ role: "user", content: "from messages" }])
    const both = await infer(id, { input: "a", prompt: "b" })
    expect(both.status).toBe(400)
  })

  it("a Router candidate without its own token uses the workspace's router integration", async () => {
    const id = await leaderboard()
    await choose(id, await candidate(id, { name: "router", model_name: "x/y" }))
    await infer(id, { input: "hi" })
    expect(fake.seen.at(-1)!.headers.authorization).toBeUndefined()
  })

  it("rejects streaming, ambiguous or missing input, and other workspaces", async () => {
    const id = await leaderboard()
    await choose(id, await candidate(id, { name: "router", model_name: "x/y" }))
    const streaming = await infer(id, { input: "hi", stream: true })
    expect(streaming.status).toBe(400)
    expect(streaming.body.error.code).toBe("streaming_unsupported")
    for (const json of [{ input: "a", prompt: "b" }, {}, { messages: [] }]) {
      const reply = await infer(id, json)
      expect(reply.status, JSON.stringify(json)).toBe(400)
      expect(reply.body.error.code).toBe("validation_failed")
    }
    const stranger = await session("inference-stranger")
    expect((await infer(id, { input: "hi" }, stranger)).status).toBe(404)
  })

  it("needs the leaderboards:inference scope", async () => {
    const id = await leaderboard()
    const reader = (await podium.request("POST", "/api/tokens", {
      token: owner,
      json: { name: "reader", scopes: ["leaderboards:read"] }
    })).body.secret
    const reply = await infer(id, { input: "hi" }, reader)
    expect(reply.status).toBe(403)
    expect(reply.body.error.details.required_scope).toBe("leaderboards:inference")
  })
})

describe("upstream failures", () => {
  it("an upstream error, invalid JSON or a refused connection is 502 naming the candidate, with an error trace", async () => {
    const id = await leaderboard()
    const chosen = await candidate(id, { name: "flaky", platform: "Custom", url: `${fake.url}/flaky`, auth_type: "none" })
    await choose(id, chosen)
    for (const mode of ["error", "garbage"] as const) {
      fake.mode = mode
      const reply = await infer(id, { input: "hi" })
      fake.mode = "ok"
      expect(reply.status).toBe(502)
      expect(reply.body.error).toMatchObject({ code: "upstream_error", details: { candidate_id: chosen, candidate_name: "flaky" } })
      const trace = await traceOf(reply.body.error.details.trace_id)
      expect(trace).toMatchObject({ status: "error", candidate: chosen, output: null })
      expect(trace["error"]).toEqual(expect.any(String))
    }
    const silent = createServer(() => {}) // accepts, never answers
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve))
    try {
      const slowBoard = await leaderboard()
      await choose(slowBoard, await candidate(slowBoard, {
        name: "slow",
        platform: "Custom",
        url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
        auth_type: "none"
      }))
      const timedOut = await infer(slowBoard, { input: "hi" })
      expect(timedOut.status).toBe(502)
      expect(timedOut.body.error.message).toContain("0.5 s")
      expect(await traceOf(timedOut.body.error.details.trace_id)).toMatchObject({ status: "error" })
    } finally {
      silent.closeAllConnections()
      silent.close()
    }
    const refusedBoard = await leaderboard()
    await choose(refusedBoard, await candidate(refusedBoard, { name: "gone", platform: "Custom", url: "http://127.0.0.1:1", auth_type: "none" }))
    const refused = await infer(refusedBoard, { input: "hi" })
    expect(refused.status).toBe(502)
    expect(refused.body.error.details.candidate_name).toBe("gone")
  })
})

describe("the OpenAI-compatible alias", () => {
  it("works with the official openai client", async () => {
    const id = await leaderboard({ system_prompt: "Be kind." })
    await choose(id, await candidate(id, { name: "router", model_name: "openai/gpt-4o-mini" }))
    const client = new OpenAI({ apiKey: serving, baseURL: `${podium.url}/v1/leaderboard/${id}` })
    const answer = await client.chat.completions.create({
      model: "ignored-by-podium",
      messages: [{ role: "user", content: "Hello there" }]
    })
    expect(answer.choices[0]?.message.content).toBe("echo: Hello there")
    expect(fake.seen.at(-1)!.body.messages[0]).toEqual({ role: "system", content: "Be kind." })
  })
})
