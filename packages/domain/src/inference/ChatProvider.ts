import { Context, type Effect, type Option, type Redacted, Schema } from "effect"
import type { AuthType, Platform } from "../leaderboards/index.ts"
import type { ChatMessage } from "../shared/index.ts"

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
  readonly messages: ReadonlyArray<ChatMessage>
  readonly temperature?: number | undefined
  readonly max_tokens?: number | undefined
  /** OpenAI's `response_format` (a judge asks for a JSON schema), sent as given. */
  readonly response_format?: unknown
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

/** The candidate could not answer: an upstream 4xx/5xx, a time-out, a refused connection, invalid JSON. */
export class ChatProviderFailed extends Schema.TaggedError<ChatProviderFailed>()("ChatProviderFailed", {
  candidate_id: Schema.String,
  candidate_name: Schema.String,
  reason: Schema.String,
  upstream_status: Schema.NullOr(Schema.Number),
  latency_ms: Schema.Number
}) {}

/** OpenAI chat completions against a candidate. */
export class ChatProvider extends Context.Service<ChatProvider, {
  readonly complete: (target: ChatTarget, request: ChatRequest) => Effect.Effect<ChatCompletion, ChatProviderFailed>
}>()("@podium/domain/inference/ChatProvider") {}
