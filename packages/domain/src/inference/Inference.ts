import { Context, DateTime, Effect, Layer, Option } from "effect"
import {
  type Candidate,
  type Leaderboard,
  LeaderboardArchived,
  type LeaderboardId,
  Leaderboards,
} from "../leaderboards/index.ts"
import { type InvalidInput, type NotFound, hotSpan } from "../shared/index.ts"
import { NoServingModel, StreamingUnsupported, UpstreamFailed } from "./InferenceErrors.ts"
import { type BudgetExceeded, boundCall, chargeOf, priceSubject, type Principal } from "../access/index.ts"
import { CallBudgets } from "./CallBudgets.ts"
import { CandidateCalls } from "./CandidateCalls.ts"
import { BudgetDefaultMaxTokens } from "./PriceCatalogue.ts"
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
      const calls = yield* CandidateCalls
      const defaultMaxTokens = yield* BudgetDefaultMaxTokens
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
        const { prices, send } = yield* calls.candidate(candidate, leaderboard.workspace_id, credentials)
        const bound = boundCall(prices, prompt.messages, request.max_tokens, defaultMaxTokens)
        // Once the upstream is called the call is paid for: finish it and record its trace even if
        // the client hangs up meanwhile (waiting for the budget can still be given up).
        return yield* Effect.uninterruptibleMask((restore) => Effect.gen(function*() {
          const reservation = yield* restore(reserve(principal, bound, priceSubject(`candidate ${candidate.id}`, prices)))
          const result = yield* Effect.result(send({
            messages: prompt.messages,
            temperature: request.temperature,
            // a budgeted call's output is capped, so its reservation bounds what it costs
            max_tokens: Option.isSome(reservation) ? bound.maxTokens : request.max_tokens
          }))
          const created_at = yield* DateTime.now
          yield* settle(reservation, result._tag === "Success" ? chargeOf(bound, result.success.costUsd) : null)
          const traceId = yield* calls.trace({
            workspace_id: leaderboard.workspace_id,
            leaderboard_id: leaderboard.id,
            leaderboard_model_id: candidate.id,
            source: "inference",
            run_id: null,
            input: prompt.input,
            messages: prompt.messages,
            token_id: principal._tag === "ApiTokenPrincipal" ? principal.token.id : null,
            created_at
          }, result)
          if (result._tag === "Failure") {
            return yield* new UpstreamFailed({
              candidate_id: candidate.id,
              candidate_name: candidate.name,
              reason: result.failure.reason,
              trace_id: traceId
            })
          }
          return { body: result.success.body, traceId, candidate }
        }))
      }, hotSpan("Inference.infer"))

      return Inference.of({ infer })
    })
  )
}
