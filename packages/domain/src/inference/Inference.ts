import { Context, DateTime, Effect, Exit, Layer, Option, Result, type Scope, Stream } from "effect"
import {
  type Candidate,
  type Leaderboard,
  LeaderboardArchived,
  type LeaderboardId,
  Leaderboards,
} from "../leaderboards/index.ts"
import { hotSpan, IdGenerator, type InvalidInput, type NotFound } from "../shared/index.ts"
import { NoServingModel, UpstreamFailed } from "./InferenceErrors.ts"
import { type BudgetExceeded, boundCall, chargeOf, priceSubject, type Principal } from "../access/index.ts"
import { CallBudgets, streamLifetime } from "./CallBudgets.ts"
import { CandidateCalls, type StreamEnd } from "./CandidateCalls.ts"
import { type ChatProviderFailed, nothingReceived, type StreamReceived } from "./ChatProvider.ts"
import { BudgetDefaultMaxTokens } from "./PriceCatalogue.ts"
import { cappedParameters, forwardedParameters, type InferenceRequest, requestedMaxTokens } from "./InferenceRequest.ts"
import { buildMessages } from "./Prompt.ts"
import { TraceId } from "./Trace.ts"

/**
 * A served call's answer: the upstream's JSON as it arrived (`body`), or for `stream: true` its
 * server-sent events as they arrive (`events`, failing with UpstreamFailed when the upstream fails
 * mid-stream; the events before it were passed on).
 */
export type Answer =
  | { readonly body: string; readonly events?: undefined }
  | { readonly body?: undefined; readonly events: Stream.Stream<Uint8Array, UpstreamFailed> }

export type Served = Answer & {
  readonly traceId: string
  readonly candidate: Candidate
}

/**
 * How a stream that stopped ended, for its trace: all of it (`ended`: its last event was pulled),
 * the upstream failed, or the caller stopped reading (interrupted, or done with it before its end).
 */
export const streamEnd = (exit: Exit.Exit<unknown, ChatProviderFailed>, ended: boolean): StreamEnd => {
  if (Exit.isSuccess(exit)) return ended ? { _tag: "Ended" } : { _tag: "Cancelled" }
  const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  return failure !== undefined ? { _tag: "Failed", reason: failure.error.reason } : { _tag: "Cancelled" }
}

/**
 * A streamed call's finish, run once: when its events stop (`bind`: ended, failed or cut off), when
 * the caller's scope closes first (`Cancelled`: the caller went away before or while it ran), or
 * when the caller `stop`s it itself; `dismiss` drops it (a call that failed before any event, which
 * its caller records as a failed call).
 */
export const finishOnce = (finish: (end: StreamEnd) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    let finished = false
    const stop = (end: StreamEnd) =>
      Effect.suspend(() => {
        if (finished) return Effect.void
        finished = true
        return finish(end)
      })
    yield* Effect.addFinalizer(() => stop({ _tag: "Cancelled" }))
    return {
      stop,
      dismiss: Effect.sync(() => {
        finished = true
      }),
      bind: <A, R>(events: Stream.Stream<A, ChatProviderFailed, R>) => onStop(events, stop)
    }
  })

/** `events` telling `stopped` how they ended (`streamEnd`) once they stop, whichever way. */
export const onStop = <A, R>(
  events: Stream.Stream<A, ChatProviderFailed, R>,
  stopped: (end: StreamEnd) => Effect.Effect<void>
): Stream.Stream<A, ChatProviderFailed, R> => {
  let ended = false
  return events.pipe(
    Stream.onEnd(Effect.sync(() => {
      ended = true
    })),
    Stream.onExit((exit) => stopped(streamEnd(exit, ended)))
  )
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
 * like any candidate; a model that cannot answer fails like an upstream (502). The caller's whole
 * chat-completions request is forwarded (`forwardedParameters`); `stream: true` answers the
 * upstream's events as they come, the call's trace written once when the stream stops (with the
 * whole text, or `cancelled` with what had arrived when the caller went away) and its budget
 * settled then.
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
    | LeaderboardArchived
    | NoServingModel
    | UpstreamFailed
    | BudgetExceeded,
    Scope.Scope
  >
}>()("@podium/domain/inference/Inference") {
  static readonly layer = Layer.effect(
    Inference,
    Effect.gen(function*() {
      const leaderboards = yield* Leaderboards
      const calls = yield* CandidateCalls
      const defaultMaxTokens = yield* BudgetDefaultMaxTokens
      const { reserve, settle } = yield* CallBudgets
      const ids = yield* IdGenerator

      const infer = Effect.fnUntraced(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        request: InferenceRequest
      ) {
        const { candidates, credentials, leaderboard, ranking_winner } = yield* leaderboards.serving(principal, leaderboardId)
        if (leaderboard.status === "archived") return yield* new LeaderboardArchived({ leaderboard_id: leaderboardId })
        const prompt = yield* Effect.fromResult(buildMessages(request, leaderboard.challenge))
        const candidate = servingCandidate(leaderboard, candidates, ranking_winner)
        if (candidate === undefined) return yield* new NoServingModel({ leaderboard_id: leaderboardId })
        const call = yield* calls.candidate(candidate, leaderboard.workspace_id, credentials)
        const parameters = forwardedParameters(request)
        const bound = boundCall(call.prices, prompt.messages, requestedMaxTokens(request), defaultMaxTokens, parameters)
        const subject = priceSubject(`candidate ${candidate.id}`, call.prices)
        /** The request sent: a budgeted call's output is capped, so its reservation bounds what it costs. */
        const chat = (reservation: Option.Option<string>) => ({
          messages: prompt.messages,
          parameters: Option.isSome(reservation) ? cappedParameters(parameters, bound.maxTokens) : parameters
        })
        const traced = (created_at: DateTime.Utc, id?: string) => ({
          id,
          workspace_id: leaderboard.workspace_id,
          leaderboard_id: leaderboard.id,
          leaderboard_model_id: candidate.id,
          platform: candidate.platform,
          source: "inference" as const,
          run_id: null,
          input: prompt.input,
          messages: prompt.messages,
          token_id: principal._tag === "ApiTokenPrincipal" ? principal.token.id : null,
          created_at
        })
        const failed = (reason: string, trace_id: string) =>
          new UpstreamFailed({ candidate_id: candidate.id, candidate_name: candidate.name, reason, trace_id })

        if (request.stream === true) {
          const includeUsage = request.stream_options?.include_usage === true
          return yield* Effect.uninterruptibleMask((restore) => Effect.gen(function*() {
            const reservation = yield* restore(reserve(principal, bound, subject, streamLifetime))
            const traceId = yield* ids.make(TraceId)
            const created_at = yield* DateTime.now
            // Settled and traced once, when the call stops (finishOnce); a call that failed before any
            // event cost nothing.
            let received = () => nothingReceived(0)
            let charge = (got: StreamReceived): number | null => chargeOf(bound, got.costUsd)
            const { bind, stop } = yield* finishOnce((end) =>
              Effect.suspend(() => {
                const got = received()
                return Effect.andThen(
                  settle(reservation, charge(got)),
                  calls.trace(traced(created_at, traceId), { _tag: "Streamed", received: got, end })
                )
              })
            )
            const opened = yield* Effect.result(restore(call.stream(chat(reservation), { includeUsage })))
            if (Result.isFailure(opened)) {
              const { latency_ms, reason } = opened.failure
              received = () => nothingReceived(latency_ms)
              charge = () => null
              yield* stop({ _tag: "Failed", reason })
              return yield* failed(reason, traceId)
            }
            received = opened.success.received
            const served: Served = {
              traceId,
              candidate,
              events: opened.success.events.pipe(
                bind,
                (events) => Option.isSome(reservation) ? Stream.interruptWhen(events, Effect.sleep(streamLifetime)) : events,
                Stream.mapError((e) => failed(e.reason, traceId))
              )
            }
            return served
          }))
        }

        // Once the upstream is called the call is paid for: finish it and record its trace even if the
        // client hangs up meanwhile (waiting for the budget can still be given up).
        return yield* Effect.uninterruptibleMask((restore) => Effect.gen(function*() {
          const reservation = yield* restore(reserve(principal, bound, subject))
          const result = yield* Effect.result(call.send(chat(reservation)))
          const created_at = yield* DateTime.now
          yield* settle(reservation, result._tag === "Success" ? chargeOf(bound, result.success.costUsd) : null)
          const traceId = yield* calls.trace(traced(created_at), result)
          if (result._tag === "Failure") return yield* failed(result.failure.reason, traceId)
          const served: Served = { body: result.success.body, traceId, candidate }
          return served
        }))
      }, hotSpan("Inference.infer"))

      return Inference.of({ infer })
    })
  )
}
