import { Context, type Effect, type Option, type Redacted, Schema, type Scope, type Stream } from "effect"
import type { AuthType, Platform } from "../leaderboards/index.ts"
import type { RequestMessage } from "../shared/index.ts"

/** Where and how to call one candidate (Router, Hub or Custom; Service goes to model inference). */
export interface ChatTarget {
  readonly candidateId: string
  readonly candidateName: string
  readonly platform: Exclude<Platform, "Service">
  /** The provider's model id, sent as `model`. */
  readonly modelName: string | null
  /** Custom: the OpenAI-compatible base URL; `{url}/chat/completions` is called. */
  readonly url: string | null
  readonly authType: AuthType
  readonly authHeaderName: string | null
  /** The candidate's own token, else the workspace's integration token for the provider. */
  readonly token: Option.Option<Redacted.Redacted<string>>
  readonly inputPricePerMTokens: number | null
  readonly outputPricePerMTokens: number | null
}

export interface ChatRequest {
  readonly messages: ReadonlyArray<RequestMessage>
  readonly temperature?: number | undefined
  readonly max_tokens?: number | undefined
  /** OpenAI's `response_format` (a judge asks for a JSON schema), sent as given. */
  readonly response_format?: unknown
  /**
   * The serving path's other chat-completions parameters as the caller sent them (`tools`,
   * `tool_choice`, `top_p`, `stop`, `seed`, `user`, `logprobs`, `max_completion_tokens`...), sent
   * as given beside the fields above (which win). Never `model`, `messages`, `stream` or
   * `stream_options`: the provider sets those.
   */
  readonly parameters?: Readonly<Record<string, unknown>> | undefined
}

export interface ChatUsage {
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly total_tokens: number
}

export interface ChatCompletion {
  /** The upstream's JSON body as it arrived, byte for byte (it is the inference response). */
  readonly body: string
  /** `choices[0].message.content`, when there is one. */
  readonly output: string | null
  readonly usage: ChatUsage | null
  /** `usage.cost` when the upstream reports it, else from the candidate's prices, else null. */
  readonly costUsd: number | null
  readonly latencyMs: number
}

/** What a streamed answer has brought so far; all of it once its events have ended. */
export interface StreamReceived {
  /** The text of `choices[0]`'s deltas, else its tool calls as JSON; null while there is neither. */
  readonly output: string | null
  readonly usage: ChatUsage | null
  /** As for `ChatCompletion`: `usage.cost`, else priced usage, else null. */
  readonly costUsd: number | null
  /** Since the call was made. */
  readonly latencyMs: number
  /** The upstream's own error event (`data: {"error": ...}`), passed on to the caller, when it sent one. */
  readonly error: string | null
}

/** How a stream is passed on. */
export interface StreamOptions {
  /** Whether the caller asked for the usage chunk (`stream_options.include_usage`); the upstream is always asked for it. */
  readonly includeUsage: boolean
  /** Answer in this name: each event's `model` is replaced (a model's versions answer as the model). */
  readonly answerAs?: string | undefined
}

/**
 * A streamed chat completion, once the upstream has answered 2xx with an event stream: its
 * server-sent events in OpenAI's chunk format, whole events, passed on as they arrive and pulled
 * (a slow reader slows the upstream down), ending after `data: [DONE]`. Interrupting the stream
 * aborts the upstream call, and so does closing the scope it was opened in before the stream ended
 * (or when it was never run). It fails with ChatProviderFailed when the upstream fails mid-stream
 * (the events before were passed on).
 */
export interface ChatStream {
  readonly events: Stream.Stream<Uint8Array, ChatProviderFailed>
  readonly received: () => StreamReceived
}

/** The candidate could not answer: an upstream 4xx/5xx, a time-out, a refused connection, invalid JSON. */
export class ChatProviderFailed extends Schema.TaggedError<ChatProviderFailed>()("ChatProviderFailed", {
  candidate_id: Schema.String,
  candidate_name: Schema.String,
  reason: Schema.String,
  upstream_status: Schema.NullOr(Schema.Number),
  latency_ms: Schema.Number
}) {}

/**
 * OpenAI chat completions against a candidate: `complete` for the whole answer, `stream` for its
 * events as they come (failing, before any event, as `complete` fails).
 */
export class ChatProvider extends Context.Service<ChatProvider, {
  readonly complete: (target: ChatTarget, request: ChatRequest) => Effect.Effect<ChatCompletion, ChatProviderFailed>
  readonly stream: (
    target: ChatTarget,
    request: ChatRequest,
    options: StreamOptions
  ) => Effect.Effect<ChatStream, ChatProviderFailed, Scope.Scope>
}>()("@podium/domain/inference/ChatProvider") {}

/** A stream's `received` before anything arrived. */
export const nothingReceived = (latencyMs: number): StreamReceived => ({ output: null, usage: null, costUsd: null, latencyMs, error: null })
