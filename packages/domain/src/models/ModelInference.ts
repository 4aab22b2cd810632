import { Context, Effect, Layer, Option, Result, type Scope, Stream } from "effect"
import { type BudgetExceeded, boundCall, chargeOf, priceSubject, type Principal, visibleMembership } from "../access/index.ts"
import {
  CallBudgets,
  forwardedParameters,
  streamLifetime,
  type InferenceRequest,
  type NoActiveDeployment,
  requestMessages,
  type Trace,
  TraceId,
  tracedOutcome,
  TraceWriter,
  UpstreamFailed
} from "../inference/index.ts"
import {
  hotSpan,
  IdGenerator,
  type InvalidInput,
  messageText,
  type ModelId,
  type ModelVersionId,
  NotFound,
  storableJson,
  storableText
} from "../shared/index.ts"
import type { NoSuccessfulFineTune } from "./ModelErrors.ts"
import { InferenceLogId } from "./InferenceLog.ts"
import { ModelServing, type ServingModel } from "./ModelServing.ts"
import {
  answeredAs,
  type ChosenVersion,
  exchangeOf,
  redact,
  type StreamedCall,
  type VersionCall,
  VersionCaller,
  type VersionExchange
} from "./VersionCaller.ts"

export interface ModelServed {
  readonly model_id: ModelId
  readonly version_id: ModelVersionId
  /** The inference log's id (queued for writing; a stream's once it stops). */
  readonly message_id: string
  readonly trace_id: string | null
  /** The upstream's JSON, answered in the model's name (`answeredAs`). */
  readonly body?: string | undefined
  /** For `stream: true`: the events as they come, each in the model's name (see Inference's `Answer`). */
  readonly events?: Stream.Stream<Uint8Array, UpstreamFailed> | undefined
}

/**
 * Inference through a model's deployed version: the most recently deployed active one, or the one
 * named (which must be active). Served from the instance's serving copy (no database round trip
 * before the upstream on a hit); each call is budgeted like leaderboard inference, traced on the
 * model's first leaderboard (source `inference`) and logged in the model's inference log (off the
 * request path), whose webhook delivery, when the model's webhook is on, is stored with it. The
 * caller's whole chat-completions request is forwarded; `stream: true` streams, the trace and log
 * written once when the stream stops (see Inference).
 */
export class ModelInference extends Context.Service<ModelInference, {
  readonly infer: (
    principal: Principal,
    modelId: ModelId,
    versionId: ModelVersionId | null,
    request: InferenceRequest
  ) => Effect.Effect<
    ModelServed,
    NotFound | InvalidInput | NoSuccessfulFineTune | NoActiveDeployment | UpstreamFailed | BudgetExceeded,
    Scope.Scope
  >
}>()("@podium/domain/models/ModelInference") {
  static readonly layer = Layer.effect(
    ModelInference,
    Effect.gen(function*() {
      const serving = yield* ModelServing
      const calls = yield* VersionCaller
      const budgets = yield* CallBudgets
      const traces = yield* TraceWriter
      const identifiers = yield* IdGenerator

      const visible = (principal: Principal, model: ServingModel) =>
        principal._tag === "ApiTokenPrincipal"
          ? principal.token.workspace_id === model.workspace_id
          : principal._tag === "SessionPrincipal" && visibleMembership(principal, model.workspace_id) !== undefined

      /** The call's trace (on the model's first leaderboard) and inference log, once it is over. */
      const record = Effect.fnUntraced(function*(
        principal: Principal,
        chosen: ChosenVersion,
        exchange: VersionExchange,
        called: VersionCall | StreamedCall,
        ids: { readonly message_id: string; readonly trace_id: string | null }
      ) {
        const { model } = chosen
        if (ids.trace_id !== null) {
          const traced = tracedOutcome(called.result)
          const input = exchange.messages.findLast((m) => m.role === "user")
          const text = input === undefined ? null : messageText(input)
          yield* traces.record({
            id: ids.trace_id,
            workspace_id: model.workspace_id,
            leaderboard_id: model.leaderboard_ids[0]!,
            leaderboard_model_id: null,
            source: "inference",
            run_id: null,
            input: text === null ? null : storableText(text),
            messages: storableJson(exchange.sent) as Trace["messages"],
            output: traced.output === null ? null : storableText(traced.output),
            status: traced.status,
            error: traced.error === null ? null : storableText(redact(traced.error, chosen.secret)),
            latency_ms: traced.latency_ms,
            usage: traced.usage,
            cost_usd: traced.cost_usd,
            token_id: principal._tag === "ApiTokenPrincipal" ? principal.token.id : null,
            created_at: called.timestamp
          })
        }
        yield* calls.log(chosen, exchange, called, ids)
      })

      const infer = Effect.fnUntraced(function*(
        principal: Principal,
        modelId: ModelId,
        versionId: ModelVersionId | null,
        request: InferenceRequest
      ) {
        const found = yield* serving.snapshot(modelId)
        if (Option.isNone(found) || !visible(principal, found.value)) return yield* new NotFound({ resource: "model", id: modelId })
        const given = yield* Effect.fromResult(requestMessages(request))
        const chosen = yield* calls.choose(found.value, versionId)
        const { model, secret, target, version } = chosen
        const parameters = forwardedParameters(request)
        const exchange = exchangeOf(chosen, { messages: given.messages, parameters })
        const prices = { input: target.inputPricePerMTokens, output: target.outputPricePerMTokens }
        const bound = boundCall(prices, exchange.sent, exchange.maxTokens, exchange.maxTokens, parameters)
        const subject = priceSubject(`model version ${version.id}`, prices)
        const failed = (reason: string, trace_id: string) =>
          new UpstreamFailed({ candidate_id: version.id, candidate_name: model.name, reason: redact(reason, secret), trace_id })

        // once the upstream is called the call is paid for: finish it, and log and trace it, even if the client hangs up
        return yield* Effect.uninterruptibleMask((restore) => Effect.gen(function*() {
          const reservation = yield* restore(budgets.reserve(principal, bound, subject, request.stream === true ? streamLifetime : undefined))
          const ids = {
            message_id: yield* identifiers.make(InferenceLogId),
            trace_id: model.leaderboard_ids.length > 0 ? yield* identifiers.make(TraceId) : null
          }
          const served = { model_id: model.id, version_id: version.id, message_id: ids.message_id, trace_id: ids.trace_id }

          if (request.stream === true) {
            const includeUsage = request.stream_options?.include_usage === true
            const opened = yield* restore(calls.stream(chosen, exchange, { includeUsage, answerAs: model.name }, (called) =>
              Effect.andThen(
                budgets.settle(reservation, chargeOf(bound, called.result.received.costUsd)),
                record(principal, chosen, exchange, called, ids)
              )))
            if (Result.isFailure(opened)) {
              yield* budgets.settle(reservation, null)
              yield* record(principal, chosen, exchange, opened.failure, ids)
              return yield* failed(opened.failure.result.failure.reason, ids.trace_id ?? ids.message_id)
            }
            const events = opened.success.events.pipe(
              (events) => Option.isSome(reservation) ? Stream.interruptWhen(events, Effect.sleep(streamLifetime)) : events,
              Stream.mapError((e) => failed(e.reason, ids.trace_id ?? ids.message_id))
            )
            return { ...served, events } satisfies ModelServed
          }

          const called = yield* calls.call(chosen, exchange)
          const { result } = called
          yield* budgets.settle(reservation, result._tag === "Success" ? chargeOf(bound, result.success.costUsd) : null)
          yield* record(principal, chosen, exchange, called, ids)
          if (result._tag === "Failure") return yield* failed(result.failure.reason, ids.trace_id ?? ids.message_id)
          return { ...served, body: answeredAs(result.success.body, model.name) } satisfies ModelServed
        }))
      }, hotSpan("ModelInference.infer"))

      return ModelInference.of({ infer })
    })
  ).pipe(Layer.provide(VersionCaller.layer))
}
