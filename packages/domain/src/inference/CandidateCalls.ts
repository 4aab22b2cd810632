import { Context, DateTime, Effect, Layer, type Result } from "effect"
import type { Prices } from "../access/index.ts"
import type { Candidate } from "../leaderboards/index.ts"
import { type ChatMessage, IdGenerator, storableText, type WorkspaceId } from "../shared/index.ts"
import { type ChatCompletion, ChatProvider, type ChatProviderFailed, type ChatRequest, type ChatTarget } from "./ChatProvider.ts"
import { ChatTargets, isCallable } from "./ChatTargets.ts"
import { PriceCatalogue } from "./PriceCatalogue.ts"
import { ServiceModels } from "./ServiceModels.ts"
import { TraceId, type TraceSource } from "./Trace.ts"
import { TraceWriter } from "./TraceWriter.ts"

/** One request to a candidate (or a judge, or a fine-tuning target), answered or failed as an upstream fails. */
export type Send = (request: ChatRequest) => Effect.Effect<ChatCompletion, ChatProviderFailed>

/** How to call one candidate: the prices it is charged at, and where its requests go. */
export interface CandidateCall {
  readonly prices: Prices
  readonly send: Send
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
  readonly messages: ReadonlyArray<ChatMessage>
  /** The API token the call was made with (production inference). */
  readonly token_id: string | null
  /** When the call was made; by default, when its trace is recorded. */
  readonly created_at?: DateTime.Utc | undefined
}

/** A call's outcome as its trace records it: the completion, else why and after how long it failed. */
export type CallOutcome = Result.Result<ChatCompletion, { readonly reason: string; readonly latency_ms: number }>

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
  readonly trace: (call: CallTrace, outcome: CallOutcome) => Effect.Effect<string>
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
          return { prices, send: (request) => serviceModels.complete(workspaceId, modelId, request) } satisfies CandidateCall
        }
        const target: ChatTarget = {
          ...yield* targets.of(candidate, workspaceId, credentials),
          inputPricePerMTokens: prices.input,
          outputPricePerMTokens: prices.output
        }
        return { prices, send: (request) => provider.complete(target, request) } satisfies CandidateCall
      })

      const target = (target: ChatTarget): Send => (request) => provider.complete(target, request)

      const trace = Effect.fnUntraced(function*(call: CallTrace, outcome: CallOutcome) {
        const id = yield* ids.make(TraceId)
        const completion = outcome._tag === "Success" ? outcome.success : null
        yield* traces.record({
          id,
          workspace_id: call.workspace_id,
          leaderboard_id: call.leaderboard_id,
          leaderboard_model_id: call.leaderboard_model_id,
          source: call.source,
          run_id: call.run_id,
          input: call.input === null ? null : storableText(call.input),
          messages: call.messages.map((m) => ({ role: storableText(m.role), content: storableText(m.content) })),
          output: completion !== null && completion.output !== null ? storableText(completion.output) : null,
          status: outcome._tag === "Success" ? "success" : "error",
          error: outcome._tag === "Failure" ? storableText(outcome.failure.reason) : null,
          latency_ms: outcome._tag === "Success" ? outcome.success.latencyMs : outcome.failure.latency_ms,
          usage: completion !== null && completion.usage !== null ? { ...completion.usage } : null,
          cost_usd: completion === null ? null : completion.costUsd,
          token_id: call.token_id,
          created_at: call.created_at ?? (yield* DateTime.now)
        })
        return id
      })

      return CandidateCalls.of({ candidate, target, trace })
    })
  )
}
