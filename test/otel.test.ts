import { Effect, Layer, References, Tracer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { layerSpans } from "@podium/server/App"
import { loadConfig } from "@podium/server/Config"
import { layerTracer } from "@podium/server/Telemetry"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "./fakes/OtlpReceiver.ts"
import { apiToken, servingLeaderboard, signedIn } from "./support/Builders.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

let fake: OpenAiFake
let receiver: OtlpReceiver

beforeAll(async () => {
  fake = await startOpenAiFake()
  receiver = await startOtlpReceiver()
})
afterAll(async () => {
  await receiver.close()
  await fake.close()
})

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
const callerSpanId = "00f067aa0ba902b7"
const streamTraceId = "5bf92f3577b34da6a3ce929d0e0e4737"
const prompt = "where is my parcel 7f3a?"

/** Podium with `env`, one leaderboard inference through the Router fake with a `traceparent`, then stopped (which flushes the spans). */
const inferOnce = async (env: Record<string, string>, fastInference = true, streamed = false) => {
  const podium: Podium = await startPodium({
    ROUTER_BASE_URL: `${fake.url}/router/api/v1`,
    ...env
  }, { fastInference })
  try {
    const owner = await signedIn(podium, "otel-owner")
    const token = await apiToken(owner.api, ["leaderboards:inference"], { name: "serving" })
    const { id } = await servingLeaderboard(owner.api, {
      name: "small",
      platform: "Router",
      model_name: "openai/gpt-4o-mini",
      token: "sk-or-candidate",
      input_price_per_m_tokens: 0.15,
      output_price_per_m_tokens: 0.6
    })
    const reply = await podium.request("POST", `/v1/leaderboard/${id}/inference`, {
      token,
      json: { input: prompt },
      headers: { traceparent: `00-${traceId}-${callerSpanId}-01` }
    })
    expect(reply.status).toBe(200)
    if (streamed) {
      fake.streams = true
      const events = await podium.request("POST", `/v1/leaderboard/${id}/inference`, {
        token,
        json: { input: prompt, stream: true },
        headers: { traceparent: `00-${streamTraceId}-${callerSpanId}-01` }
      })
      fake.streams = false
      expect(events.status).toBe(200)
      expect(events.text).toContain("data: [DONE]")
    }
  } finally {
    await podium.stop()
  }
}

const ofTrace = (id = traceId) => receiver.spans.filter((span) => span.traceId === id)

/** The chat span and its ancestry up to the caller's span. */
const chatSpanOf = (spans: ReadonlyArray<ReceivedSpan>) => {
  const chat = spans.find((span) => span.attributes["gen_ai.operation.name"] === "chat")
  expect(chat, `a GenAI span among ${spans.map((s) => s.name).join(", ")}`).toBeDefined()
  const byId = new Map(spans.map((span) => [span.spanId, span]))
  const chain: Array<ReceivedSpan> = []
  for (let span: ReceivedSpan | undefined = chat; span !== undefined; span = byId.get(span.parentSpanId)) chain.push(span)
  return { chat: chat!, chain }
}

describe("OpenTelemetry export over OTLP/HTTP", () => {
  it("continues the caller's trace; the inference's chat span carries the GenAI conventions and no prompt text by default (protobuf)", async () => {
    receiver.spans.length = 0
    receiver.contentTypes.length = 0
    await inferOnce({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "50" }, true, true)
    await expect.poll(() => ofTrace().some((s) => s.attributes["gen_ai.operation.name"] === "chat"), { timeout: 5_000 }).toBe(true)
    expect(receiver.contentTypes.every((type) => type === "application/x-protobuf")).toBe(true)

    const spans = ofTrace()
    const { chain, chat } = chatSpanOf(spans)
    // chat ← Inference.infer ← the server span, whose parent is the caller's span
    const server = chain.at(-1)!
    expect(server.kind).toBe(2) // SERVER
    expect(server.parentSpanId).toBe(callerSpanId)
    expect(chain.map((span) => span.name)).toContain("Inference.infer")

    expect(chat.name).toBe("chat openai/gpt-4o-mini")
    expect(chat.kind).toBe(3) // CLIENT
    expect(chat.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openrouter",
      "gen_ai.request.model": "openai/gpt-4o-mini",
      "gen_ai.usage.input_tokens": 1000,
      "gen_ai.usage.output_tokens": 500,
      "gen_ai.response.finish_reasons": ["stop"]
    })
    expect(chat.attributes["gen_ai.input.messages"]).toBeUndefined()
    expect(chat.attributes["gen_ai.output.messages"]).toBeUndefined()
    for (const span of receiver.spans) expect(JSON.stringify(span.attributes)).not.toContain(prompt)

    expect(chat.resource).toMatchObject({ "service.name": "podium", "service.version": expect.any(String) })
    expect(chat.resource["service.instance.id"]).toMatch(/^[0-9a-f-]{36}$/)

    // a streamed call's chat span lasts until its events end, with the usage chunk's counts
    const streamed = chatSpanOf(ofTrace(streamTraceId))
    expect(streamed.chain.at(-1)!.parentSpanId).toBe(callerSpanId)
    expect(streamed.chat.attributes).toMatchObject({
      "gen_ai.request.model": "openai/gpt-4o-mini",
      "gen_ai.usage.input_tokens": 1000,
      "gen_ai.usage.output_tokens": 500
    })
  })

  it("carries the prompt and the answer with OTEL_CAPTURE_CONTENT=true, through the router too (JSON)", async () => {
    receiver.spans.length = 0
    receiver.contentTypes.length = 0
    await inferOnce({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_BSP_SCHEDULE_DELAY: "50",
      OTEL_SERVICE_NAME: "podium-eu",
      OTEL_CAPTURE_CONTENT: "true"
    }, false)
    await expect.poll(() => ofTrace().some((s) => s.attributes["gen_ai.operation.name"] === "chat"), { timeout: 5_000 }).toBe(true)
    expect(receiver.contentTypes.every((type) => type.startsWith("application/json"))).toBe(true)

    const { chain, chat } = chatSpanOf(ofTrace())
    expect(chain.at(-1)!.parentSpanId).toBe(callerSpanId)
    expect(chat.attributes).toMatchObject({ "gen_ai.usage.input_tokens": 1000, "gen_ai.usage.output_tokens": 500 })
    const input = JSON.parse(String(chat.attributes["gen_ai.input.messages"]))
    expect(JSON.stringify(input)).toContain(prompt)
    const output = JSON.parse(String(chat.attributes["gen_ai.output.messages"]))
    expect(output[0]).toMatchObject({ role: "assistant", finish_reason: "stop" })
    expect(output[0].parts[0].content).toContain(prompt) // the fake echoes the last message
    expect(chat.resource["service.name"]).toBe("podium-eu")
  })

  it("without OTEL_EXPORTER_OTLP_ENDPOINT installs no tracer: no span is built and none reaches the receiver", async () => {
    const config = await Effect.runPromise(loadConfig({}))
    const { enabled, tracer } = await Effect.runPromise(
      Effect.gen(function*() {
        return { enabled: yield* References.TracerEnabled, tracer: yield* Tracer.Tracer }
      }).pipe(Effect.provide(layerSpans.pipe(Layer.provideMerge(layerTracer(config)))))
    )
    expect(enabled).toBe(false)
    expect(tracer).toBe(Tracer.nativeTracer)

    receiver.spans.length = 0
    receiver.contentTypes.length = 0
    await inferOnce({ OTEL_BSP_SCHEDULE_DELAY: "50" })
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(receiver.contentTypes).toEqual([])
    expect(receiver.spans).toEqual([])
  })
})
