import { Context, Effect, Layer, Option } from "effect"
import { type BudgetExceeded, boundCall, chargeOf, priceSubject, type Principal, visibleMembership } from "../access/index.ts"
import {
  CallBudgets,
  type InferenceRequest,
  type NoActiveDeployment,
  requestMessages,
  StreamingUnsupported,
  TraceId,
  TraceWriter,
  UpstreamFailed
} from "../inference/index.ts"
import { hotSpan, IdGenerator, type InvalidInput, type ModelId, type ModelVersionId, NotFound, storableText } from "../shared/index.ts"
import type { NoSuccessfulFineTune } from "./ModelErrors.ts"
import { InferenceLogId } from "./InferenceLog.ts"
import { ModelServing, type ServingModel } from "./ModelServing.ts"
import { answeredAs, exchangeOf, redact, VersionCaller } from "./VersionCaller.ts"

export interface ModelServed {
  /** The upstream's JSON, answered in the model's name (`answeredAs`). */
  readonly body: string
  readonly model_id: ModelId
  readonly version_id: ModelVersionId
  /** The inference log's id (queued for writing). */
  readonly message_id: string
  readonly trace_id: string | null
}

/**
 * Inference through a model's deployed version: the most recently deployed active one, or the one
 * named (which must be active). Served from the instance's serving copy (no database round trip
 * before the upstream on a hit); each call is budgeted like leaderboard inference, traced on the
 * model's first leaderboard (source `inference`) and logged in the model's inference log (off the
 * request path), whose webhook delivery, when the model's webhook is on, is stored with it.
 */
export class ModelInference extends Context.Service<ModelInference, {
  readonly infer: (
    principal: Principal,
    modelId: ModelId,
    versionId: ModelVersionId | null,
    request: InferenceRequest
  ) => Effect.Effect<
    ModelServed,
    NotFound | InvalidInput | StreamingUnsupported | NoSuccessfulFineTune | NoActiveDeployment | UpstreamFailed | BudgetExceeded
  >
}>()("@podium/domain/models/ModelInference") {
  static readonly layer = Layer.effect(
    ModelInference,
    Effect.gen(function*() {
      const serving = yield* ModelServing
      const calls = yield* VersionCaller
      const budgets = yield* CallBudgets
      const traces = yield* TraceWriter
      const ids = yield* IdGenerator

      const visible = (principal: Principal, model: ServingModel) =>
        principal._tag === "ApiTokenPrincipal"
          ? principal.token.workspace_id === model.workspace_id
          : principal._tag === "SessionPrincipal" && visibleMembership(principal, model.workspace_id) !== undefined

      const infer = Effect.fnUntraced(function*(
        principal: Principal,
        modelId: ModelId,
        versionId: ModelVersionId | null,
        request: InferenceRequest
      ) {
        if (request.stream === true) return yield* new StreamingUnsupported()
        const found = yield* serving.snapshot(modelId)
        if (Option.isNone(found) || !visible(principal, found.value)) return yield* new NotFound({ resource: "model", id: modelId })
        const given = yield* Effect.fromResult(requestMessages(request))
        const chosen = yield* calls.choose(found.value, versionId)
        const { model, secret, target, version } = chosen
        const exchange = exchangeOf(chosen, { messages: given.messages, temperature: request.temperature, max_tokens: request.max_tokens })
        const { maxTokens, messages, sent } = exchange
        const prices = { input: target.inputPricePerMTokens, output: target.outputPricePerMTokens }
        const bound = boundCall(prices, sent, maxTokens, maxTokens)

        // once the upstream is called the call is paid for: finish it, and log and trace it, even if the client hangs up
        return yield* Effect.uninterruptibleMask((restore) => Effect.gen(function*() {
          const reservation = yield* restore(budgets.reserve(principal, bound, priceSubject(`model version ${version.id}`, prices)))
          const called = yield* calls.call(chosen, exchange)
          const { result, timestamp } = called
          yield* budgets.settle(reservation, result._tag === "Success" ? chargeOf(bound, result.success.costUsd) : null)
          const messageId = yield* ids.make(InferenceLogId)
          const traceId = model.leaderboard_ids.length > 0 ? yield* ids.make(TraceId) : null
          const input = messages.findLast((m) => m.role === "user")?.content ?? null
          const output = result._tag === "Success" ? result.success.output : null
          if (traceId !== null) {
            yield* traces.record({
              id: traceId,
              workspace_id: model.workspace_id,
              leaderboard_id: model.leaderboard_ids[0]!,
              leaderboard_model_id: null,
              source: "inference",
              run_id: null,
              input: input === null ? null : storableText(input),
              messages: sent.map((m) => ({ role: storableText(m.role), content: storableText(m.content) })),
              output: output === null ? null : storableText(output),
              status: result._tag === "Success" ? "success" : "error",
              error: result._tag === "Failure" ? storableText(result.failure.reason) : null,
              latency_ms: result._tag === "Success" ? result.success.latencyMs : result.failure.latency_ms,
              usage: result._tag === "Success" && result.success.usage !== null ? { ...result.success.usage } : null,
              cost_usd: result._tag === "Success" ? result.success.costUsd : null,
              token_id: principal._tag === "ApiTokenPrincipal" ? principal.token.id : null,
              created_at: timestamp
            })
          }
          yield* calls.log(chosen, exchange, called, { message_id: messageId, trace_id: traceId })
          if (result._tag === "Failure") {
            return yield* new UpstreamFailed({
              candidate_id: version.id,
              candidate_name: model.name,
              reason: redact(result.failure.reason, secret),
              trace_id: traceId ?? messageId
            })
          }
          return { body: answeredAs(result.success.body, model.name), model_id: model.id, version_id: version.id, message_id: messageId, trace_id: traceId }
        }))
      }, hotSpan("ModelInference.infer"))

      return ModelInference.of({ infer })
    })
  ).pipe(Layer.provide(VersionCaller.layer))
}
