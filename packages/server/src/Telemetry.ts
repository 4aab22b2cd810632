/**
 * OpenTelemetry: with `OTEL_EXPORTER_OTLP_ENDPOINT` set, spans go out over OTLP/HTTP through
 * Effect's own exporter (`OtlpTracer`), and every chat completion Podium makes (inference, model
 * inference, run cells, judges, fine-tune evaluations: all go through the ChatProvider port) is a
 * client span carrying the OpenTelemetry GenAI semantic conventions. Unset, neither is installed:
 * no tracer means `References.TracerEnabled` false (App.ts `layerSpans`) and no span is built.
 */
import { Clock, Effect, Exit, Layer, Option, Redacted, Stream, type Tracer } from "effect"
import { FetchHttpClient } from "effect/http"
import { OtlpSerialization, OtlpTracer } from "effect/observability"
import { randomUUID } from "node:crypto"
import { serviceVersion } from "@podium/adapters-http/api/Api"
import {
  type ChatCompletion,
  ChatProvider,
  type ChatRequest,
  type ChatTarget,
  type ChatUsage,
  type StreamReceived
} from "@podium/domain/inference"
import { messageText } from "@podium/domain/shared"

/** The settings this reads (Config.ts: `OTEL_*`). */
export interface TelemetrySettings {
  readonly otelEndpoint: Option.Option<string>
  readonly otelProtocol: "http/protobuf" | "http/json"
  readonly otelHeaders: Option.Option<Redacted.Redacted<string>>
  readonly otelServiceName: string
  readonly otelExportIntervalMs: number
  readonly otelCaptureContent: boolean
}

/** This process among the instances of one service (`service.instance.id`): new at each start. */
export const instanceId = randomUUID()

/** `OTEL_EXPORTER_OTLP_HEADERS` as the OpenTelemetry spec writes it: `key=value` pairs, comma-separated, percent-encoded. */
export const parseOtlpHeaders = (text: string): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const entry of text.split(",")) {
    const at = entry.indexOf("=")
    if (at <= 0) continue
    const key = entry.slice(0, at).trim()
    if (key === "") continue
    try {
      headers[decodeURIComponent(key)] = decodeURIComponent(entry.slice(at + 1).trim())
    } catch {
      headers[key] = entry.slice(at + 1).trim()
    }
  }
  return headers
}

/**
 * The OTLP/HTTP span exporter `config` asks for, or nothing. Spans are batched and sent every
 * `OTEL_BSP_SCHEDULE_DELAY` ms and on shutdown; the exporter's own requests are not traced.
 */
export const layerTracer = (config: TelemetrySettings): Layer.Layer<never> =>
  Option.match(config.otelEndpoint, {
    onNone: () => Layer.empty,
    onSome: (endpoint) =>
      OtlpTracer.layer({
        url: `${endpoint.replace(/\/+$/, "")}/v1/traces`,
        resource: {
          serviceName: config.otelServiceName,
          serviceVersion,
          attributes: { "service.instance.id": instanceId }
        },
        headers: Option.match(config.otelHeaders, { onNone: () => undefined, onSome: (h) => parseOtlpHeaders(Redacted.value(h)) }),
        exportInterval: config.otelExportIntervalMs
      }).pipe(
        Layer.provide(config.otelProtocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
        Layer.provide(FetchHttpClient.layer)
      )
  })

/** `gen_ai.provider.name` of a platform: OpenRouter, Hugging Face, or an OpenAI-compatible endpoint of the workspace's own. */
const providerName = (target: ChatTarget): string =>
  target.platform === "Router" ? "openrouter" : target.platform === "Hub" ? "huggingface" : "openai"

/** The GenAI message form (`role` and `parts`) of chat messages, as `gen_ai.input.messages` holds them. */
const inputMessages = (request: ChatRequest): string =>
  JSON.stringify(request.messages.map((message) => ({
    role: message.role,
    parts: [{ type: "text", content: messageText(message) ?? "" }]
  })))

const outputMessages = (output: string | null, finishReason: string | undefined): string =>
  JSON.stringify(output === null ? [] : [{
    role: "assistant",
    parts: [{ type: "text", content: output }],
    ...(finishReason === undefined ? {} : { finish_reason: finishReason })
  }])

/** What is known of a call before it is made. */
const requestAttributes = (target: ChatTarget, request: ChatRequest, capture: boolean): Record<string, unknown> => {
  const attributes: Record<string, unknown> = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": providerName(target),
    "podium.candidate.id": target.candidateId
  }
  if (target.modelName !== null) attributes["gen_ai.request.model"] = target.modelName
  const maxTokens = request.max_tokens ?? request.parameters?.["max_completion_tokens"] ?? request.parameters?.["max_tokens"]
  if (typeof maxTokens === "number") attributes["gen_ai.request.max_tokens"] = maxTokens
  const temperature = request.temperature ?? request.parameters?.["temperature"]
  if (typeof temperature === "number") attributes["gen_ai.request.temperature"] = temperature
  if (capture) attributes["gen_ai.input.messages"] = inputMessages(request)
  return attributes
}

const annotateUsage = (span: Tracer.Span, usage: ChatUsage | null) => {
  if (usage === null) return
  span.attribute("gen_ai.usage.input_tokens", usage.prompt_tokens)
  span.attribute("gen_ai.usage.output_tokens", usage.completion_tokens)
}

/** The answer's id, model and finish reasons, read from its JSON body (only when traced). */
const annotateCompletion = (span: Tracer.Span, completion: ChatCompletion, capture: boolean) => {
  annotateUsage(span, completion.usage)
  let finishReason: string | undefined
  try {
    const body = JSON.parse(completion.body) as {
      readonly id?: unknown
      readonly model?: unknown
      readonly choices?: ReadonlyArray<{ readonly finish_reason?: unknown }>
    }
    if (typeof body.id === "string") span.attribute("gen_ai.response.id", body.id)
    if (typeof body.model === "string") span.attribute("gen_ai.response.model", body.model)
    const reasons = Array.isArray(body.choices)
      ? body.choices.flatMap((choice) => typeof choice?.finish_reason === "string" ? [choice.finish_reason] : [])
      : []
    if (reasons.length > 0) span.attribute("gen_ai.response.finish_reasons", reasons)
    finishReason = reasons[0]
  } catch {
    // not JSON: no more than the usage is known
  }
  if (capture) span.attribute("gen_ai.output.messages", outputMessages(completion.output, finishReason))
}

const annotateReceived = (span: Tracer.Span, received: StreamReceived, capture: boolean) => {
  annotateUsage(span, received.usage)
  if (received.error !== null) span.attribute("error.type", "upstream_error_event")
  if (capture) span.attribute("gen_ai.output.messages", outputMessages(received.output, undefined))
}

const spanName = (target: ChatTarget) => target.modelName === null ? "chat" : `chat ${target.modelName}`

/**
 * ChatProvider with a GenAI client span around each call (`chat {model}`): the request's model,
 * the provider, the usage and finish reasons; the prompt and answer text only when `capture`
 * (`OTEL_CAPTURE_CONTENT=true`). A streamed call's span lasts until its events stop (or the
 * caller's scope closes), with the usage of what arrived. Installed only when spans are exported.
 */
export const layerGenAiSpans = (capture: boolean) =>
  Layer.effect(
    ChatProvider,
    Effect.gen(function*() {
      const provider = yield* ChatProvider
      return ChatProvider.of({
        complete: (target, request) =>
          Effect.withSpan(
            Effect.flatMap(Effect.currentSpan.pipe(Effect.orDie), (span) =>
              Effect.tap(provider.complete(target, request), (completion) => Effect.sync(() => annotateCompletion(span, completion, capture)))),
            spanName(target),
            { kind: "client", attributes: requestAttributes(target, request, capture), captureStackTrace: false }
          ),
        stream: (target, request, options) =>
          Effect.gen(function*() {
            // ends when the caller's scope closes (the stream written or cut off), or before when it fails to open
            const span = yield* Effect.makeSpanScoped(spanName(target), { kind: "client", attributes: requestAttributes(target, request, capture) })
            const opened = yield* Effect.exit(Effect.withParentSpan(provider.stream(target, request, options), span))
            if (Exit.isFailure(opened)) {
              span.end(yield* Clock.currentTimeNanos, opened)
              return yield* opened
            }
            const { events, received } = opened.value
            return {
              received,
              events: Stream.onExit(events, (exit) =>
                Effect.flatMap(Clock.currentTimeNanos, (now) =>
                  Effect.sync(() => {
                    annotateReceived(span, received(), capture)
                    span.end(now, exit)
                  })))
            }
          })
      })
    })
  )

/** `providers` with GenAI spans around their ChatProvider when spans are exported; as they are otherwise. */
export const withGenAiSpans = (config: TelemetrySettings) =>
<A, E, R>(providers: Layer.Layer<A | ChatProvider, E, R>): Layer.Layer<A | ChatProvider, E, R> =>
  Option.isSome(config.otelEndpoint) ? layerGenAiSpans(config.otelCaptureContent).pipe(Layer.provideMerge(providers)) : providers
