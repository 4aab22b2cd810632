import { Context, DateTime, Effect, Layer, Option } from "effect"
import {
  type Candidate,
  type Leaderboard,
  LeaderboardArchived,
  type LeaderboardId,
  Leaderboards,
} from "../leaderboards/index.ts"
import { type InvalidInput, type NotFound, hotSpan, IdGenerator } from "../shared/index.ts"
import { NoServingModel, StreamingUnsupported, UpstreamFailed } from "./InferenceErrors.ts"
import { type BudgetExceeded, boundCall, chargeOf, type Prices, priceSubject, type Principal } from "../access/index.ts"
import { CallBudgets } from "./CallBudgets.ts"
import { type ChatCompletion, ChatProvider, type ChatProviderFailed, type ChatRequest } from "./ChatProvider.ts"
import { BudgetDefaultMaxTokens, PriceCatalogue } from "./PriceCatalogue.ts"
import { TraceWriter } from "./TraceWriter.ts"
import type { Trace } from "./Trace.ts"
import { ChatTargets, isCallable } from "./ChatTargets.ts"
import { ServiceModels } from "./ServiceModels.ts"
import type { InferenceRequest } from "./InferenceRequest.ts"
import { buildMessages } from "./Prompt.ts"

export interface Served {
  /** The upstream's JSON, as it arrived. */
  readonly body: string
  readonly traceId: string
  readonly candidate: Candidate
}

/**
 * The candidate that serves a leaderboard: the manual choice; else the ranking's winner (human
 * evaluation's common rows; runs will set it too), else the chosen candidate, else the only
 * candidate when there is exactly one; else none (409 `no_serving_model`).
 */
export const servingCandidate = (
  leaderboard: Pick<Leaderboard, "chosen_model_strategy" | "chosen_leaderboard_model_id">,
  candidates: ReadonlyArray<Candidate>,
  rankingWinner: string | null
): Candidate | undefined => {
  const byId = (id: string | null) => candidates.find((c) => c.id === id)
  if (leaderboard.chosen_model_strategy === "manual") return byId(leaderboard.chosen_leaderboard_model_id)
  // before any ranking: the chosen candidate, else the only one
  return byId(rankingWinner) ?? byId(leaderboard.chosen_leaderboard_model_id) ??
    (candidates.length === 1 ? candidates[0] : undefined)
}

/**
 * Production traffic through a leaderboard's serving candidate; every call leaves a trace. A Service
 * candidate is answered by its model's deployed version (ServiceModels), traced and budgeted here
 * like any candidate; a model that cannot answer fails like an upstream (502).
 */
export class Inference extends Context.Service<Inference, {
  readonly infer: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    request: InferenceRequest
  ) => Effect.Effect<
    Served,
    | NotFound
    | InvalidInput
    | StreamingUnsupported
    | LeaderboardArchived
    | NoServingModel
    | UpstreamFailed
    | BudgetExceeded
  >
}>()("@podium/domain/inference/Inference") {
  static readonly layer = Layer.effect(
    Inference,
    Effect.gen(function*() {
      const leaderboards = yield* Leaderboards
      const targets = yield* ChatTargets
      const provider = yield* ChatProvider
      const serviceModels = yield* ServiceModels
      const traces = yield* TraceWriter
      const ids = yield* IdGenerator

      const catalogue = yield* PriceCatalogue
      const defaultMaxTokens = yield* BudgetDefaultMaxTokens

      /** The candidate's own prices, else (for router models) the router's catalogue. */
      const pricesOf = (candidate: Candidate): Effect.Effect<Prices> => {
        const own = { input: candidate.input_price_per_m_tokens, output: candidate.output_price_per_m_tokens }
        return (own.input === null || own.output === null) && candidate.platform === "Router" && candidate.model_name !== null
          ? catalogue.routerPrices(candidate.model_name)
          : Effect.succeed(own)
      }

      const { reserve, settle } = yield* CallBudgets

      const infer = Effect.fnUntraced(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        request: InferenceRequest
      ) {
        if (request.stream === true) return yield* new StreamingUnsupported()
        const { candidates, credentials, leaderboard, ranking_winner } = yield* leaderboards.serving(principal, leaderboardId)
        if (leaderboard.status === "archived") return yield* new LeaderboardArchived({ leaderboard_id: leaderboardId })
        const prompt = yield* Effect.fromResult(buildMessages(request, leaderboard.challenge))
        const candidate = servingCandidate(leaderboard, candidates, ranking_winner)
        if (candidate === undefined) return yield* new NoServingModel({ leaderboard_id: leaderboardId })
        const prices = yield* pricesOf(candidate)
        const complete: (request: ChatRequest) => Effect.Effect<ChatCompletion, ChatProviderFailed> = isCallable(candidate)
          ? yield* Effect.map(
            targets.of(candidate, leaderboard.workspace_id, credentials),
            (target) => (request: ChatRequest) =>
              provider.complete({ ...target, inputPricePerMTokens: prices.input, outputPricePerMTokens: prices.output }, request)
          )
          : (request) => serviceModels.complete(leaderboard.workspace_id, candidate.model_id ?? "", request)
        const bound = boundCall(prices, prompt.messages, request.max_tokens, defaultMaxTokens)
        // Once the upstream is called the call is paid for: finish it and record its trace even if
        // the client hangs up meanwhile (waiting for the budget can still be given up).
        return yield* Effect.uninterruptibleMask((restore) => Effect.gen(function*() {
          const reservation = yield* restore(reserve(principal, bound, priceSubject(`candidate ${candidate.id}`, prices)))
          const result = yield* Effect.result(complete({
            messages: prompt.messages,
            temperature: request.temperature,
            // a budgeted call's output is capped, so its reservation bounds what it costs
            max_tokens: Option.isSome(reservation) ? bound.maxTokens : request.max_tokens
          }))
          const traceId = yield* ids.next
          const base = {
            id: traceId,
            workspace_id: leaderboard.workspace_id,
            leaderboard_id: leaderboard.id,
            leaderboard_model_id: candidate.id,
            source: "inference",
            run_id: null,
            input: prompt.input,
            messages: prompt.messages,
            token_id: principal._tag === "ApiTokenPrincipal" ? principal.token.id : null,
            created_at: yield* DateTime.now
          } as const
          yield* settle(reservation, result._tag === "Success" ? chargeOf(bound, result.success.costUsd) : null)
          if (result._tag === "Failure") {
            const failure = result.failure
            yield* traces.record({
              ...base,
              output: null,
              status: "error",
              error: failure.reason,
              latency_ms: failure.latency_ms,
              usage: null,
              cost_usd: null
            } satisfies Trace)
            return yield* new UpstreamFailed({
              candidate_id: candidate.id,
              candidate_name: candidate.name,
              reason: failure.reason,
              trace_id: traceId
            })
          }
          const completion = result.success
          yield* traces.record({
            ...base,
            output: completion.output,
            status: "success",
            error: null,
            latency_ms: completion.latencyMs,
            usage: completion.usage === null ? null : { ...completion.usage },
            cost_usd: completion.costUsd
          } satisfies Trace)
          return { body: completion.body, traceId, candidate }
        }))
      }, hotSpan("Inference.infer"))

      return Inference.of({ infer })
    })
  )
}
