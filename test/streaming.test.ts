import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import OpenAI from "openai"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Answer, latch, type ModelFake, startModelFake, type StreamRecord } from "./fakes/ModelFake.ts"
import { startWebhookReceiver, type WebhookReceiver } from "./fakes/WebhookReceiver.ts"
import { aCandidate, aLeaderboard, apiToken, aToken, type NewCandidate, servingLeaderboard, type SignedIn, signedIn } from "./support/Builders.ts"
import { at, serveChild, stopChildren } from "./support/ChildPodium.ts"
import { deployedModel, routerWithFewShotModel } from "./support/Models.ts"
import { type Podium, sessionSecret, startPodium } from "./support/Podium.ts"
import { freshDatabaseUrl } from "./support/database.ts"
import { query } from "./support/sql.ts"

// Streaming on the serving path (issue 30): `stream: true` answers OpenAI's event stream as the
// upstream sends it, at the front door and at the router; the trace, inference log and webhook are
// written once when it ends; a client going away aborts the upstream; an upstream failing
// mid-stream ends it with an error event; budgets reserve before and settle after; a slow reader
// of a 64 MB answer holds Podium's memory flat.

const routerKey = "sk-or-v1-streaming-router"
let fake: ModelFake
let podium: Podium
let owner: SignedIn
let leaderboardToken: string
let modelToken: string
let readToken: string

let receiver: WebhookReceiver

beforeAll(async () => {
  receiver = await startWebhookReceiver("/hooks")
  fake = await startModelFake({ key: routerKey })
  routerWithFewShotModel(fake)
  podium = await startPodium({ ROUTER_BASE_URL: `${fake.url}/api/v1`, WEBHOOK_POLL_INTERVAL_MS: "50", WEBHOOK_RETRY_BASE_MS: "50" })
  owner = await signedIn(podium, "streaming-owner")
  await owner.api((c) => c.integrations.validate({ payload: { provider: "router", token: routerKey } }))
  leaderboardToken = await apiToken(owner.api, ["leaderboards:inference"])
  modelToken = await apiToken(owner.api, ["models:inference"])
  readToken = await apiToken(owner.api, ["models:read", "leaderboards:read"])
}, 60_000)
afterAll(async () => {
  await podium?.stop()
  await fake?.close()
  await receiver.close()
  stopChildren()
})

/** The front door takes a Content-Length JSON body; a chunked one goes to the HttpApi router. */
const chunkedFetch: typeof fetch = (input, init) =>
  typeof init?.body === "string"
    ? fetch(input, { ...init, body: new Blob([init.body]).stream(), duplex: "half" } as RequestInit)
    : fetch(input, init)
const transports = [
  { transport: "front door", fetch: globalThis.fetch, chunked: false },
  { transport: "router", fetch: chunkedFetch, chunked: true }
] as const

let models = 0
/** A leaderboard served by a Custom candidate at the fake under a model name of its own, answered by `answer`. */
const leaderboardAnswering = async (answer: (question: string, body: any) => Answer, candidate: Partial<NewCandidate> = {}) => {
  const model = `stream-model-${++models}`
  fake.models[model] = answer
  const { id, candidate: candidateId } = await servingLeaderboard(
    owner.api,
    aCandidate(`${fake.url}/v1`, { name: model, model_name: model, ...candidate }),
    aLeaderboard({ name: "streaming" })
  )
  return { id, model, candidateId }
}
const openai = (baseURL: string, fetch: typeof globalThis.fetch, apiKey = leaderboardToken) =>
  new OpenAI({ baseURL, apiKey, fetch, maxRetries: 0 })
const post = (fetch: typeof globalThis.fetch, path: string, json: unknown, token = leaderboardToken) =>
  fetch(`${podium.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(json)
  })

/** The `data:` payloads of an event stream, as they arrive. */
async function* events(response: Response): AsyncGenerator<string> {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    buffer += decoder.decode(value, { stream: true })
    for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
      const data = buffer.slice(0, end).split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n")
      buffer = buffer.slice(end + 2)
      if (data !== "") yield data
    }
  }
}
const contentOf = (payloads: ReadonlyArray<string>) =>
  payloads.filter((p) => p !== "[DONE]").map((p) => JSON.parse(p).choices?.[0]?.delta?.content ?? "").join("")
/** The newest stream the fake answered, once there is one more than `before`. */
const newStream = async (before: number): Promise<StreamRecord> => {
  await expect.poll(() => fake.streams.length, { timeout: 5_000, interval: 10 }).toBeGreaterThan(before)
  return fake.streams.at(-1)!
}

/** The trace, once written (traces are written just after the answer): polled until it is there. */
const traceOf = async (traceId: string) => {
  await expect.poll(async () =>
    (await query(podium.databaseUrl, (sql) => sql`SELECT id FROM traces WHERE id = ${traceId}`)).length, { timeout: 5_000, interval: 25 })
    .toBe(1)
  const [row] = await query(podium.databaseUrl, (sql) =>
    sql`SELECT leaderboard_model_id::text AS candidate, status, input, output, error, usage, cost_usd FROM traces WHERE id = ${traceId}`)
  return row!
}
const tracesOf = async (leaderboardId: string) =>
  (await query(podium.databaseUrl, (sql) => sql`SELECT count(*)::int AS n FROM traces WHERE leaderboard_id = ${leaderboardId}`))[0]!["n"]

describe.each(transports)("leaderboard inference streamed at the $transport", ({ fetch }) => {
  it("answers text/event-stream, the X-Service headers before the first event, events passed on as they arrive, one trace at the end", async () => {
    const first = latch()
    const middle = latch()
    const { id, model, candidateId } = await leaderboardAnswering(
      () => ({ stream: { deltas: ["Hel", "lo, ", "world"], holds: [{ after: 0, gate: first.gate }, { after: 2, gate: middle.gate }] } }),
      { input_price_per_m_tokens: 0.15, output_price_per_m_tokens: 0.6 }
    )
    const before = fake.streams.length
    const answered = post(fetch, `/v1/leaderboard/${id}/inference`, { input: "hi", stream: true, stream_options: { include_usage: true } })
    const upstream = await newStream(before)
    // the headers come while the upstream has sent no event yet (else the first event is let go after 2 s)
    const early = await Promise.race([answered.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 2_000))])
    first.release()
    const response = await answered
    expect(early, "the headers came before the first event").toBe(true)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/)
    expect(response.headers.get("x-service-leaderboard-model-id")).toBe(candidateId)
    expect(response.headers.get("x-service-model-source")).toBe("Custom")
    const traceId = response.headers.get("x-service-trace-id")!
    expect(traceId).toMatch(/^[0-9a-f-]{36}$/)

    const payloads: Array<string> = []
    for await (const data of events(response)) {
      payloads.push(data)
      if (contentOf(payloads) === "Hel") {
        // the client has the first text while the upstream holds the rest back
        expect(upstream.finished).toBe(false)
        expect(upstream.eventsSent).toBe(2)
        middle.release()
      }
    }
    expect(contentOf(payloads)).toBe("Hello, world")
    expect(payloads.at(-1)).toBe("[DONE]")
    // passed on as the upstream sent them, the usage chunk included (the caller asked for it)
    expect(payloads.slice(0, -1).map((p) => JSON.parse(p))).toEqual(upstream.events.map((p) => JSON.parse(p)))
    expect(upstream.body).toMatchObject({ model, stream: true, stream_options: { include_usage: true } })

    const trace = await traceOf(traceId)
    expect(trace).toMatchObject({
      candidate: candidateId,
      status: "success",
      input: "hi",
      output: "Hello, world",
      error: null,
      usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 }
    })
    expect(trace["cost_usd"]).toBeCloseTo(0.00045, 10)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await tracesOf(id)).toBe(1)
  })

  it("the openai package assembles the text; the usage chunk comes only when the caller asked for it", async () => {
    const { id } = await leaderboardAnswering(() => ({ stream: { deltas: ["The ", "parcel ", "is ", "on its way."], delayMs: 5 } }))
    const client = openai(`${podium.url}/v1/leaderboard/${id}`, fetch)
    const { data: stream, response } = await client.chat.completions.create({
      model: "x",
      messages: [{ role: "user", content: "Where is my parcel?" }],
      stream: true
    }).withResponse()
    let text = ""
    const chunks: Array<OpenAI.Chat.Completions.ChatCompletionChunk> = []
    for await (const chunk of stream) {
      chunks.push(chunk)
      text += chunk.choices[0]?.delta?.content ?? ""
    }
    expect(text).toBe("The parcel is on its way.")
    expect(text).toBe(fake.streams.at(-1)!.text)
    expect(chunks.filter((c) => c.choices.length === 0)).toEqual([])
    // the upstream was asked for usage all the same: the trace has it
    expect(fake.streams.at(-1)!.body.stream_options).toEqual({ include_usage: true })
    const trace = await traceOf(response.headers.get("x-service-trace-id")!)
    expect(trace).toMatchObject({ status: "success", output: "The parcel is on its way.", usage: { completion_tokens: 500 } })

    const withUsage = await client.chat.completions.create({
      model: "x",
      messages: [{ role: "user", content: "Again?" }],
      stream: true,
      stream_options: { include_usage: true }
    })
    const usage: Array<unknown> = []
    for await (const chunk of withUsage) if (chunk.usage) usage.push(chunk.usage)
    expect(usage).toEqual([{ prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 }])
  })

  it("a client that goes away mid-stream aborts the upstream at once; the trace is cancelled with what had arrived", async () => {
    const hold = latch()
    const { id } = await leaderboardAnswering(() => ({ stream: { deltas: ["Hel", "lo, ", "world"], holds: [{ after: 2, gate: hold.gate }] } }))
    const before = fake.streams.length
    const { data: stream, response } = await openai(`${podium.url}/v1/leaderboard/${id}`, fetch).chat.completions.create({
      model: "x",
      messages: [{ role: "user", content: "hi" }],
      stream: true
    }).withResponse()
    let text = ""
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? ""
      if (text === "Hel") stream.controller.abort()
    }
    const upstream = await newStream(before)
    try {
      await expect.poll(() => upstream.aborted, { timeout: 1_000, interval: 10 }).toBe(true)
      expect(upstream.finished).toBe(false)
    } finally {
      hold.release()
    }
    const trace = await traceOf(response.headers.get("x-service-trace-id")!)
    expect(trace).toMatchObject({ status: "cancelled", output: "Hel" })
  })

  it.each([
    { why: "destroys the socket", stream: { deltas: ["Hel", "lo, ", "world"], failAfter: 3 }, arrived: "Hello, " },
    { why: "ends without [DONE]", stream: { deltas: ["Hel", "lo, ", "world"], noDone: true }, arrived: "Hello, world" }
  ])("an upstream that $why mid-stream: an error event ends the stream, the trace has the error and what had arrived", async ({ arrived, stream }) => {
    const { id } = await leaderboardAnswering(() => ({ stream }))
    const response = await post(fetch, `/v1/leaderboard/${id}/inference`, { input: "hi", stream: true })
    expect(response.status).toBe(200)
    const payloads: Array<string> = []
    for await (const data of events(response)) payloads.push(data)
    const last = JSON.parse(payloads.at(-1)!)
    expect(last).toMatchObject({ error: { code: "upstream_error", message: expect.any(String) } })
    expect(contentOf(payloads.slice(0, -1))).toBe(arrived)
    const trace = await traceOf(response.headers.get("x-service-trace-id")!)
    expect(trace).toMatchObject({ status: "error", output: arrived, error: expect.any(String) })

    // the openai package's iterator throws
    const client = openai(`${podium.url}/v1/leaderboard/${id}`, fetch)
    const iterated = await client.chat.completions.create({ model: "x", messages: [{ role: "user", content: "hi" }], stream: true })
    let text = ""
    const failed = await (async () => {
      for await (const chunk of iterated) text += chunk.choices[0]?.delta?.content ?? ""
    })().then(() => undefined, (e: unknown) => e)
    expect(failed).toBeInstanceOf(OpenAI.APIError)
    expect(text).toBe(arrived)
  })

  it("errors before the stream starts stay JSON: 502 for an upstream 500, 429 for a used-up budget", async () => {
    const { id } = await leaderboardAnswering(() => ({ status: 500 }))
    const failed = await post(fetch, `/v1/leaderboard/${id}/inference`, { input: "hi", stream: true })
    expect(failed.status).toBe(502)
    expect(failed.headers.get("content-type")).toMatch(/^application\/json/)
    expect(((await failed.json()) as any).error.code).toBe("upstream_error")

    const { secret } = await owner.api((c) =>
      c.tokens.create({ payload: aToken(["leaderboards:inference"], { name: "spent", budget_limit: 0, budget_reset_interval: "daily" }) })
    )
    const refused = await post(fetch, `/v1/leaderboard/${id}/inference`, { input: "hi", stream: true }, secret)
    expect(refused.status).toBe(429)
    expect(refused.headers.get("content-type")).toMatch(/^application\/json/)
    expect(((await refused.json()) as any).error.code).toBe("budget_exceeded")
  })

  it("budgets: a streamed call reserves before and settles at the end with its cost; spend never beyond limit + one call", async () => {
    // each call costs 0.01 (500 output tokens at 20 per million)
    const { id } = await leaderboardAnswering(
      () => ({ stream: { deltas: ["a", "b"], delayMs: 5 } }),
      { input_price_per_m_tokens: 0, output_price_per_m_tokens: 20 }
    )
    const { secret, token } = await owner.api((c) =>
      c.tokens.create({ payload: aToken(["leaderboards:inference"], { name: "budgeted", budget_limit: 0.095, budget_reset_interval: "daily" }) })
    )
    const ledger = async () => {
      const [spend] = await query(podium.databaseUrl, (sql) => sql`SELECT settled_usd, reserved_usd FROM token_spend WHERE token_id = ${token.id}`)
      const [open] = await query(podium.databaseUrl, (sql) => sql`SELECT count(*)::int AS n FROM token_reservations WHERE token_id = ${token.id}`)
      return { settled: Number(spend?.["settled_usd"] ?? 0), reserved: Number(spend?.["reserved_usd"] ?? 0), open: open!["n"] }
    }

    // one call held open: reserved while it streams, settled when it ends
    const hold = latch()
    fake.models[`stream-model-${models}`] = () => ({ stream: { deltas: ["a", "b"], holds: [{ after: 1, gate: hold.gate }] } })
    const held = await post(fetch, `/v1/leaderboard/${id}/inference`, { input: "hi", stream: true, max_tokens: 500 }, secret)
    expect(held.status).toBe(200)
    expect(await ledger()).toMatchObject({ open: 1, settled: 0 })
    expect((await ledger()).reserved).toBeGreaterThan(0)
    hold.release()
    for await (const _ of events(held)) void _
    await expect.poll(ledger, { timeout: 5_000, interval: 25 }).toMatchObject({ open: 0 })
    expect((await ledger()).settled).toBeCloseTo(0.01, 9)
    expect((await ledger()).reserved).toBeCloseTo(0, 9)
    fake.models[`stream-model-${models}`] = () => ({ stream: { deltas: ["a", "b"], delayMs: 5 } })

    // 30 at once on what is left (0.085): the ones let through stream to the end
    const settled = await Promise.all(Array.from({ length: 30 }, async () => {
      const response = await post(fetch, `/v1/leaderboard/${id}/inference`, { input: "hi", stream: true, max_tokens: 500 }, secret)
      if (response.status !== 200) return { status: response.status, code: ((await response.json()) as any).error.code as string }
      const payloads: Array<string> = []
      for await (const data of events(response)) payloads.push(data)
      return { status: 200, code: payloads.at(-1) === "[DONE]" ? "done" : payloads.at(-1) }
    }))
    const ok = settled.filter((s) => s.status === 200)
    expect(ok.every((s) => s.code === "done")).toBe(true)
    expect(settled.filter((s) => s.status !== 200).every((s) => s.status === 429 && s.code === "budget_exceeded")).toBe(true)
    expect(ok.length).toBe(9)
    const after = await ledger()
    expect(after.open).toBe(0)
    expect(after.reserved).toBeCloseTo(0, 9)
    expect(after.settled).toBeCloseTo(0.01 * (ok.length + 1), 9)
    expect(after.settled).toBeLessThanOrEqual(0.095 + 0.01 + 1e-9)
  })
})

describe("model inference and Service candidates stream", () => {
  let modelId: string
  let versionId: string
  const paths = () => [
    `/v1/models/${modelId}/inference`,
    `/api/models/${modelId}/inference`,
    `/v1/models/${modelId}/chat/completions`,
    `/v1/models/${modelId}/versions/${versionId}/inference`,
    `/api/models/${modelId}/versions/${versionId}/inference`
  ]
  const logs = async () =>
    (await podium.request("GET", `/api/models/${modelId}/inference/logs?limit=100`, { token: readToken })).body.logs as Array<any>

  beforeAll(async () => {
    ;({ modelId, versionId } = await deployedModel(podium, owner, "few_shot"))
  }, 60_000)

  it.each(transports)("every model path streams at the $transport, in the model's name, with the headers, and logs each call once", async ({ fetch }) => {
    const ids: Array<string> = []
    for (const path of paths()) {
      const response = await post(fetch, path, { messages: [{ role: "user", content: "q7" }], stream: true }, modelToken)
      expect(response.status, path).toBe(200)
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/)
      expect(response.headers.get("x-service-model-id")).toBe(modelId)
      expect(response.headers.get("x-service-model-version-id")).toBe(versionId)
      expect(response.headers.get("x-service-trace-id")).toMatch(/^[0-9a-f-]{36}$/)
      const messageId = response.headers.get("x-service-model-message-id")!
      expect(messageId).toMatch(/^[0-9a-f-]{36}$/)
      ids.push(messageId)
      const payloads: Array<string> = []
      for await (const data of events(response)) payloads.push(data)
      expect(payloads.at(-1)).toBe("[DONE]")
      expect(contentOf(payloads), path).toBe("a7")
      for (const p of payloads.slice(0, -1)) expect(JSON.parse(p).model, path).toBe("few_shot model")
      expect(payloads.join("\n")).not.toContain("acme/small")
      expect(fake.streams.at(-1)!.body).toMatchObject({ model: "acme/small", stream: true, stream_options: { include_usage: true } })
    }
    await expect.poll(async () => (await logs()).filter((l) => ids.includes(l.id)).length, { timeout: 5_000, interval: 50 }).toBe(5)
    await new Promise((resolve) => setTimeout(resolve, 300))
    const written = (await logs()).filter((l) => ids.includes(l.id))
    expect(written).toHaveLength(5)
    for (const log of written) {
      expect(log).toMatchObject({ input_message: { messages: [{ role: "user", content: "q7" }] }, metadata: { status: "success" } })
      expect(log.output_messages.messages[0].content).toBe("a7")
    }
  })

  it("the openai package streams from a model; the webhook is delivered once with the whole answer", async () => {
    const set = await podium.request("PATCH", `/api/models/${modelId}/inference/webhook`, {
      token: owner.session,
      json: { webhook_url: receiver.url, enabled: true }
    })
    expect(set.status).toBe(200)
    receiver.received.length = 0
    try {
      const { data: stream, response } = await openai(`${podium.url}/v1/models/${modelId}`, globalThis.fetch, modelToken).chat.completions.create({
        model: "x",
        messages: [{ role: "user", content: "q12" }],
        stream: true
      }).withResponse()
      let text = ""
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? ""
      expect(text).toBe("a12")
      const messageId = response.headers.get("x-service-model-message-id")!
      await expect.poll(() => receiver.received.length, { timeout: 10_000, interval: 20 }).toBe(1)
      const payload = JSON.parse(receiver.received[0]!.body)
      expect(receiver.received[0]!.headers["webhook-id"]).toBe(messageId)
      expect(payload).toMatchObject({
        event: "model.inference",
        log: { id: messageId, output_messages: { messages: [{ role: "assistant", content: "a12" }] } }
      })
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(receiver.received).toHaveLength(1)
    } finally {
      await podium.request("PATCH", `/api/models/${modelId}/inference/webhook`, { token: owner.session, json: { enabled: false } })
    }
  })

  it.each(transports)("a Service candidate streams at the $transport: the model's version answers, traced as the leaderboard's call", async ({ fetch }) => {
    const { candidate, id } = await servingLeaderboard(owner.api, { name: "our model", platform: "Service", model_id: modelId })
    const { data: stream, response } = await openai(`${podium.url}/v1/leaderboard/${id}`, fetch).chat.completions.create({
      model: "x",
      messages: [{ role: "user", content: "q42" }],
      stream: true
    }).withResponse()
    expect(response.headers.get("x-service-model-source")).toBe("Service")
    expect(response.headers.get("x-service-leaderboard-model-id")).toBe(candidate)
    let text = ""
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? ""
      expect(chunk.model).toBe("few_shot model")
    }
    expect(text).toBe("a42")
    expect(fake.streams.at(-1)!.body).toMatchObject({ model: "acme/small", stream: true })
    const trace = await traceOf(response.headers.get("x-service-trace-id")!)
    expect(trace).toMatchObject({ candidate, status: "success", output: "a42" })
  })
})

describe("backpressure", () => {
  const bytes = 64 * 1024 * 1024
  /** A Podium of its own (so that no earlier test's heap counts), serving a leaderboard whose candidate streams `huge`. */
  const servedChild = async () => {
    const child = await serveChild({
      DATABASE_URL: await freshDatabaseUrl(),
      SESSION_JWT_SECRET: sessionSecret,
      SECRETS_KEY: randomBytes(32).toString("hex"),
      ALLOW_PRIVATE_NETWORK_TARGETS: "true",
      // a small heap: garbage is collected promptly, and an answer kept whole would not fit
      NODE_OPTIONS: "--max-old-space-size=128 --max-semi-space-size=4"
    })
    const someone = await signedIn(at(child.url), "backpressure-owner")
    fake.models["huge"] = (_, body) => body.stream === true
      ? (body.messages[0].content === "warm up" ? { stream: { generated: { bytes: 1024 * 1024 } } } : { stream: { generated: { bytes } } })
      : "small"
    const { id } = await servingLeaderboard(someone.api, aCandidate(`${fake.url}/v1`, { name: "huge", model_name: "huge" }))
    return { child, id, secret: await apiToken(someone.api, ["leaderboards:inference"]) }
  }

  const rss = (pid: number) => {
    const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))!
    return Number(line.replace(/\D/g, "")) * 1024
  }

  /**
   * Streams the answer to `content` with a raw node:http client that pauses: first for a second,
   * then 20 ms every 2 MB; `progress` hears the bytes read so far.
   */
  const slowRead = (url: string, secret: string, content: string, chunked: boolean, progress: (read: number) => void = () => {}) =>
    new Promise<{ status: number; contentType: string | undefined; received: number; tail: string }>((resolve, reject) => {
      const body = JSON.stringify({ messages: [{ role: "user", content }], stream: true })
      const headers: Record<string, string> = { authorization: `Bearer ${secret}`, "content-type": "application/json" }
      if (!chunked) headers["content-length"] = String(Buffer.byteLength(body))
      const req = httpRequest(url, { method: "POST", headers }, (res) => {
        let received = 0
        let sincePause = 0
        let tail = ""
        res.pause()
        setTimeout(() => res.resume(), 1_000)
        res.on("data", (chunk: Buffer) => {
          received += chunk.length
          progress(received)
          sincePause += chunk.length
          tail = (tail + chunk.toString("latin1")).slice(-200)
          if (sincePause > 2 * 1024 * 1024) {
            sincePause = 0
            res.pause()
            setTimeout(() => res.resume(), 20)
          }
        })
        res.on("end", () => resolve({ status: res.statusCode!, contentType: res.headers["content-type"], received, tail }))
        res.on("error", reject)
      })
      req.on("error", reject)
      if (chunked) req.write(body.slice(0, 10))
      req.end(chunked ? body.slice(10) : body)
    })

  it.each(transports)("a 64 MB answer read slowly at the $transport passes with Podium's memory flat, the upstream held back", async ({ chunked }) => {
    const { child, id, secret } = await servedChild()
    const url = `${child.url}/v1/leaderboard/${id}/chat/completions`
    const pid = child.child.pid!
    const warm = await slowRead(url, secret, "warm up", chunked)
    expect(warm.status).toBe(200)
    expect(warm.tail).toContain("data: [DONE]")
    await new Promise((resolve) => setTimeout(resolve, 500))
    // Flat: what the second half of the answer adds to Podium's peak memory is nothing like its
    // size. (Garbage is collected lazily: Buffers count against V8's external-memory limit, so
    // the first megabytes raise the peak by a collection's worth whatever the length, and when a
    // collection comes varies by some 20 MB; retaining the answer would add 32 MB or more.)
    const baseline = rss(pid)
    const peaks = [baseline, baseline]
    let readSoFar = 0
    const sampler = setInterval(() => {
      const half = readSoFar < bytes / 2 ? 0 : 1
      peaks[half] = Math.max(peaks[half]!, rss(pid))
    }, 25)
    const before = fake.streams.length
    try {
      const read = await slowRead(url, secret, "huge", chunked, (n) => readSoFar = n)
      expect(read.status).toBe(200)
      expect(read.contentType).toMatch(/^text\/event-stream/)
      expect(read.tail).toContain("data: [DONE]")
      expect(read.received).toBeGreaterThan(bytes)
    } finally {
      clearInterval(sampler)
      child.child.kill("SIGKILL")
    }
    const upstream = fake.streams[before]!
    expect(upstream.finished).toBe(true)
    expect(upstream.contentLength).toBe(bytes)
    // the slow reader slowed the upstream down: its writes waited for drain
    expect(upstream.backpressured).toBeGreaterThan(0)
    const [first, second] = peaks as [number, number]
    const growth = `RSS ${baseline >> 20} MB before, peaks ${first >> 20} MB in the first 32 MB and ${second >> 20} MB in the second`
    expect(second - first, growth).toBeLessThan(24 * 1024 * 1024)
  }, 90_000)
})
