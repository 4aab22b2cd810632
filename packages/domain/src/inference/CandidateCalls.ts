import { Context, DateTime, Effect, Layer, type Result, type Scope } from "effect"
import type { Prices } from "../access/index.ts"
import type { Candidate } from "../leaderboards/index.ts"
import { IdGenerator, type RequestMessage, storableJson, storableText, type WorkspaceId } from "../shared/index.ts"
import {
  type ChatCompletion,
  ChatProvider,
  type ChatProviderFailed,
  type ChatRequest,
  type ChatStream,
  type ChatTarget,
  type StreamOptions,
  type StreamReceived
} from "./ChatProvider.ts"
import { makeCallMetrics } from "./CallMetrics.ts"
import { ChatTargets, isCallable } from "./ChatTargets.ts"
import { PriceCatalogue } from "./PriceCatalogue.ts"
import { ServiceModels } from "./ServiceModels.ts"
import { type Trace, TraceId, type TraceSource, type TraceStatus } from "./Trace.ts"
import { TraceWriter } from "./TraceWriter.ts"

/** One request to a candidate (or a judge, or a fine-tuning target), answered or failed as an upstream fails. */
export type Send = (request: ChatRequest) => Effect.Effect<ChatCompletion, ChatProviderFailed>

/** One streamed request to a candidate (ChatProvider's `stream`). */
export type SendStreamed = (
  request: ChatRequest,
  options: StreamOptions
) => Effect.Effect<ChatStream, ChatProviderFailed, Scope.Scope>

/** How to call one candidate: the prices it is charged at, and where its requests go, whole or streamed. */
export interface CandidateCall {
  readonly prices: Prices
  readonly send: Send
  readonly stream: SendStreamed
}

/** What a call's trace says besides its outcome. */
export interface CallTrace {
  readonly workspace_id: WorkspaceId
  readonly leaderboard_id: string
  /** The candidate called; null for a judge or a fine-tune's target. */
  readonly leaderboard_model_id: string | null
  readonly source: TraceSource
  readonly run_id: string | null
  readonly input: string | null
  readonly messages: ReadonlyArray<RequestMessage>
  /** The API token the call was made with (production inference). */
  readonly token_id: string | null
  /** When the call was made; by default, when its trace is recorded. */
  readonly created_at?: DateTime.Utc | undefined
  /** The trace's id when the caller named it before the call (a stream's headers carry it); else a new one. */
  readonly id?: string | undefined
  /** The called candidate's platform, for the call metrics (`unknown` when not given). */
  readonly platform?: string | undefined
}

/** A call's outcome as its trace records it: the completion, else why and after how long it failed. */
export type CallOutcome = Result.Result<ChatCompletion, { readonly reason: string; readonly latency_ms: number }>

/** How a streamed call ended: all of it passed on, the upstream failing mid-stream, or the caller going away. */
export type StreamEnd =
  | { readonly _tag: "Ended" }
  | { readonly _tag: "Failed"; readonly reason: string }
  | { readonly _tag: "Cancelled" }

/** A streamed call's outcome as its trace records it: what arrived, and how the stream ended. */
export interface StreamedOutcome {
  readonly _tag: "Streamed"
  readonly received: StreamReceived
  readonly end: StreamEnd
}

/** What a trace says of a call's outcome. */
export const tracedOutcome = (outcome: CallOutcome | StreamedOutcome): {
  readonly status: TraceStatus
  readonly output: string | null
  readonly error: string | null
  readonly latency_ms: number
  readonly usage: Readonly<Record<string, number>> | null
  readonly cost_usd: number | null
} => {
  if (outcome._tag === "Failure") {
    return { status: "error", output: null, error: outcome.failure.reason, latency_ms: outcome.failure.latency_ms, usage: null, cost_usd: null }
  }
  const { costUsd, latencyMs, output, usage } = outcome._tag === "Success" ? outcome.success : outcome.received
  const failure = outcome._tag === "Success" ? null : outcome.end._tag === "Failed" ? outcome.end.reason : outcome.received.error
  return {
    status: outcome._tag === "Streamed" && outcome.end._tag === "Cancelled" ? "cancelled" : failure === null ? "success" : "error",
    output,
    error: failure,
    latency_ms: latencyMs,
    usage: usage === null ? null : { ...usage },
    cost_usd: costUsd
  }
}

/**
 * Calling a candidate and recording its trace, for every path that calls one (inference, runs,
 * human evaluation's generation, fine-tunes): `candidate` resolves how a candidate is called (its
 * own prices, else for a router model the router's catalogue (PriceCatalogue); over chat
 * completions with its credential (ChatTargets), or a Service candidate by its model's deployed
 * version (ServiceModels)); `target` calls a judge or a fine-tuning target as it is; `trace` records
 * one call's trace (its text made storable) and answers its id. Budgets and retries stay with the
 * callers, which differ in both.
 */
export class CandidateCalls extends Context.Service<CandidateCalls, {
  readonly candidate: (
    candidate: Candidate,
    workspaceId: WorkspaceId,
    /** Sealed credentials of the leaderboard's candidates, by candidate id. */
    credentials: ReadonlyMap<string, string>
  ) => Effect.Effect<CandidateCall>
  readonly target: (target: ChatTarget) => Send
  readonly trace: (call: CallTrace, outcome: CallOutcome | StreamedOutcome) => Effect.Effect<string>
}>()("@podium/domain/inference/CandidateCalls") {
  static readonly layer = Layer.effect(
    CandidateCalls,
    Effect.gen(function*() {
      const targets = yield* ChatTargets
      const provider = yield* ChatProvider
      const serviceModels = yield* ServiceModels
      const catalogue = yield* PriceCatalogue
      const traces = yield* TraceWriter
      const ids = yield* IdGenerator
      const metrics = yield* makeCallMetrics

      /** The candidate's own prices, else (for router models) the router's catalogue. */
      const pricesOf = (candidate: Candidate): Effect.Effect<Prices> => {
        const own = { input: candidate.input_price_per_m_tokens, output: candidate.output_price_per_m_tokens }
        return (own.input === null || own.output === null) && candidate.platform === "Router" && candidate.model_name !== null
          ? catalogue.routerPrices(candidate.model_name)
          : Effect.succeed(own)
      }

      const candidate = Effect.fnUntraced(function*(
        candidate: Candidate,
        workspaceId: WorkspaceId,
        credentials: ReadonlyMap<string, string>
      ) {
        const prices = yield* pricesOf(candidate)
        if (!isCallable(candidate)) {
          const modelId = candidate.model_id ?? ""
          return {
            prices,
            send: (request) => serviceModels.complete(workspaceId, modelId, request),
            stream: (request, options) => serviceModels.stream(workspaceId, modelId, request, options)
          } satisfies CandidateCall
        }
        const target: ChatTarget = {
          ...yield* targets.of(candidate, workspaceId, credentials),
          inputPricePerMTokens: prices.input,
          outputPricePerMTokens: prices.output
        }
        return {
          prices,
          send: (request) => provider.complete(target, request),
          stream: (request, options) => provider.stream(target, request, options)
        } satisfies CandidateCall
      })

      const target = (target: ChatTarget): Send => (request) => provider.complete(target, request)

      const trace = Effect.fnUntraced(function*(call: CallTrace, outcome: CallOutcome | StreamedOutcome) {
        const id = call.id ?? (yield* ids.make(TraceId))
        const traced = tracedOutcome(outcome)
        metrics.call(call.platform, call.source, traced, call.leaderboard_id)
        yield* traces.record({
          id,
          workspace_id: call.workspace_id,
          leaderboard_id: call.leaderboard_id,
          leaderboard_model_id: call.leaderboard_model_id,
          source: call.source,
          run_id: call.run_id,
          input: call.input === null ? null : storableText(call.input),
          messages: storableJson(call.messages) as Trace["messages"],
          output: traced.output === null ? null : storableText(traced.output),
          status: traced.status,
          error: traced.error === null ? null : storableText(traced.error),
          latency_ms: traced.latency_ms,
          usage: traced.usage,
          cost_usd: traced.cost_usd,
          token_id: call.token_id,
          created_at: call.created_at ?? (yield* DateTime.now)
        })
        return id
      })

      return CandidateCalls.of({ candidate, target, trace })
    })
  )
}
