import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import type { InferenceRequest } from "@podium/adapters-http/inference/InferenceApi"
import { completion, type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import {
  aCandidate,
  aLeaderboard,
  apiToken,
  choose,
  type NewCandidate,
  type NewLeaderboard,
  type SignedIn,
  signedIn
} from "./support/Builders.ts"
import { type ApiFailure, type Caller, client, expectError } from "./support/Client.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

let fake: OpenAiFake
let podium: Podium
let owner: SignedIn
let servingToken: string // an API token with leaderboards:inference
let serving: Caller

beforeAll(async () => {
  fake = await startOpenAiFake()
  podium = await startPodium({
    ROUTER_BASE_URL: `${fake.url}/router/api/v1`,
    HUB_BASE_URL: `${fake.url}/hub`,
    PROVIDER_TIMEOUT_MS: "500"
  })
  owner = await signedIn(podium, "inference-owner")
  servingToken = await apiToken(owner.api, ["leaderboards:inference"], { name: "serving" })
  serving = client(podium, servingToken)
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

type Input = typeof InferenceRequest.Type

const leaderboard = async (overrides: Partial<NewLeaderboard> = {}) =>
  (await owner.api((c) => c.leaderboards.create({ payload: aLeaderboard({ name: "support", ...overrides }) }))).leaderboard.id
const candidate = async (leaderboard_id: LeaderboardId, payload: NewCandidate) =>
  (await owner.api((c) => c.leaderboards.addModel({ params: { leaderboard_id }, payload }))).model.id
const infer = (leaderboard_id: LeaderboardId, payload: Input, api = serving) =>
  api((c) => c.inference.infer({ params: { leaderboard_id }, payload }))
/** Calls the leaderboard and returns the response headers (which candidate served, the trace id). */
const inferHeaders = async (leaderboard_id: LeaderboardId, payload: Input) => {
  const [, response] = await serving((c) =>
    c.inference.infer({ params: { leaderboard_id }, payload, responseMode: "decoded-and-response" })
  )
  return response.headers
}
/** The trace id an upstream failure names. */
const failedTrace = (failure: ApiFailure) => String(failure.error.details?.["trace_id"])

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
    await choose(owner.api, id, chosen)

    // The upstream answer byte for byte, with its content type: the wire itself.
    const reply = await podium.request("POST", `/v1/leaderboard/${id}/inference`, {
      token: servingToken,
      json: { question: "Where is my parcel?", temperature: 0.2, max_tokens: 64 }
    })
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
    await expectError(infer(id, { input: "hi" }), 409, "no_serving_model")
    const only = await candidate(
      id,
      aCandidate(`${fake.url}/custom/v1`, { auth_type: "header", auth_header_name: "X-Api-Key", token: "custom-key" })
    )
    const alone = await inferHeaders(id, { messages: [{ role: "user", content: "hi" }] })
    expect(alone["x-service-leaderboard-model-id"]).toBe(only)
    expect(alone["x-service-model-source"]).toBe("Custom")
    expect(fake.seen.at(-1)).toMatchObject({ path: "/custom/v1/chat/completions", headers: { "x-api-key": "custom-key" } })
    expect(fake.seen.at(-1)!.headers.authorization).toBeUndefined()

    const second = await candidate(id, { name: "second", platform: "Custom", url: `${fake.url}/second/v1` })
    const two = await expectError(infer(id, { input: "hi" }), 409, "no_serving_model")
    expect(two.error.message).toContain("chosen_leaderboard_model_id")
    await choose(owner.api, id, second, "ranking_winner")
    expect((await inferHeaders(id, { input: "hi" }))["x-service-leaderboard-model-id"]).toBe(second)
  })

  it("a Custom candidate given only model_url (the spec's field) is called there", async () => {
    const id = await leaderboard()
    const only = await candidate(id, { name: "by model_url", platform: "Custom", model_url: `${fake.url}/model-url/v1` })
    expect((await inferHeaders(id, { input: "hi" }))["x-service-leaderboard-model-id"]).toBe(only)
    expect(fake.seen.at(-1)).toMatchObject({ path: "/model-url/v1/chat/completions" })
  })

  it("messages win over input, prompt, question and query sent alongside", async () => {
    const id = await leaderboard()
    await choose(owner.api, id, await candidate(id, { name: "custom", platform: "Custom", url: `${fake.url}/both/v1` }))
    await infer(id, { messages: [{ role: "user", content: "from messages" }], input: "from input", query: "q" })
    expect(fake.seen.at(-1)!.body.messages).toEqual([{ role: "user", content: "from messages" }])
    await expectError(infer(id, { input: "a", prompt: "b" }), 400, "validation_failed")
  })

  it("a Router candidate without its own token uses the workspace's router integration", async () => {
    const id = await leaderboard()
    await choose(owner.api, id, await candidate(id, { name: "router", model_name: "x/y" }))
    await infer(id, { input: "hi" })
    expect(fake.seen.at(-1)!.headers.authorization).toBeUndefined()
  })

  it("rejects ambiguous or missing input and other workspaces; a stream the upstream does not stream is 502", async () => {
    const id = await leaderboard()
    await choose(owner.api, id, await candidate(id, { name: "router", model_name: "x/y" }))
    // this fake answers JSON whatever it is asked: no event stream, so nothing was streamed
    const unstreamed = await expectError(infer(id, { input: "hi", stream: true }), 502, "upstream_error")
    expect(unstreamed.error.message).toContain("answered with something other than an event stream")
    for (const payload of [{ input: "a", prompt: "b" }, {}, { messages: [] }]) {
      await expectError(infer(id, payload), 400, "validation_failed", JSON.stringify(payload))
    }
    const stranger = client(podium, await session("inference-stranger"))
    await expectError(infer(id, { input: "hi" }, stranger), 404, "not_found")
  })

  it("needs the leaderboards:inference scope", async () => {
    const id = await leaderboard()
    const reader = client(podium, await apiToken(owner.api, ["leaderboards:read"], { name: "reader" }))
    const refused = await expectError(infer(id, { input: "hi" }, reader), 403, "insufficient_scope")
    expect(refused.error.details?.["required_scope"]).toBe("leaderboards:inference")
  })
})

describe("upstream failures", () => {
  it("an upstream error, invalid JSON or a refused connection is 502 naming the candidate, with an error trace", async () => {
    const id = await leaderboard()
    const chosen = await candidate(id, aCandidate(`${fake.url}/flaky`, { name: "flaky" }))
    await choose(owner.api, id, chosen)
    for (const mode of ["error", "garbage"] as const) {
      fake.mode = mode
      const failed = await expectError(infer(id, { input: "hi" }), 502, "upstream_error", mode).finally(() => {
        fake.mode = "ok"
      })
      expect(failed.error).toMatchObject({ details: { candidate_id: chosen, candidate_name: "flaky" } })
      const trace = await traceOf(failedTrace(failed))
      expect(trace).toMatchObject({ status: "error", candidate: chosen, output: null })
      expect(trace["error"]).toEqual(expect.any(String))
    }
    const silent = createServer(() => {}) // accepts, never answers
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve))
    try {
      const slowBoard = await leaderboard()
      const slowUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`
      await choose(owner.api, slowBoard, await candidate(slowBoard, aCandidate(slowUrl, { name: "slow" })))
      const timedOut = await expectError(infer(slowBoard, { input: "hi" }), 502, "upstream_error")
      expect(timedOut.error.message).toContain("0.5 s")
      expect(await traceOf(failedTrace(timedOut))).toMatchObject({ status: "error" })
    } finally {
      silent.closeAllConnections()
      silent.close()
    }
    const refusedBoard = await leaderboard()
    await choose(owner.api, refusedBoard, await candidate(refusedBoard, aCandidate("http://127.0.0.1:1", { name: "gone" })))
    const refused = await expectError(infer(refusedBoard, { input: "hi" }), 502, "upstream_error")
    expect(refused.error.details?.["candidate_name"]).toBe("gone")
  })
})

describe("the OpenAI-compatible alias", () => {
  it("works with the official openai client", async () => {
    const id = await leaderboard({ system_prompt: "Be kind." })
    await choose(owner.api, id, await candidate(id, { name: "router", model_name: "openai/gpt-4o-mini" }))
    const openai = new OpenAI({ apiKey: servingToken, baseURL: `${podium.url}/v1/leaderboard/${id}` })
    const answer = await openai.chat.completions.create({
      model: "ignored-by-podium",
      messages: [{ role: "user", content: "Hello there" }]
    })
    expect(answer.choices[0]?.message.content).toBe("echo: Hello there")
    expect(fake.seen.at(-1)!.body.messages[0]).toEqual({ role: "system", content: "Be kind." })
  })
})
