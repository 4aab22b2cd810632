import { Effect, Layer, Option, Result } from "effect"
import { type ChatRequest, ChatProviderFailed, ServiceModels, type StreamOptions } from "../inference/index.ts"
import { hotSpan, IdGenerator, NotFound, type WorkspaceId } from "../shared/index.ts"
import { InferenceLogId } from "./InferenceLog.ts"
import { ModelServing } from "./ModelServing.ts"
import { answeredAs, type ChosenVersion, exchangeOf, redact, unservable, VersionCaller } from "./VersionCaller.ts"

/**
 * Service candidates answered by their model's deployed version (as model inference picks it for a
 * call naming no version), logged in the model's inference log but neither traced nor budgeted
 * here: the leaderboard's caller does both, as for any candidate. Only a model of the candidate's
 * workspace answers.
 */
export const ServiceModelsDeployed = {
  layer: Layer.effect(
    ServiceModels,
    Effect.gen(function*() {
      const serving = yield* ModelServing
      const calls = yield* VersionCaller
      const ids = yield* IdGenerator

      /** The workspace's model and the version that answers for it, else why it cannot (as an upstream's failure). */
      const chosenFor = Effect.fnUntraced(function*(workspaceId: WorkspaceId, modelId: string) {
        const found = yield* serving.snapshot(modelId)
        if (Option.isNone(found) || found.value.workspace_id !== workspaceId) {
          return yield* unservable({ id: modelId, name: modelId }, new NotFound({ resource: "model", id: modelId }))
        }
        const model = found.value
        return yield* calls.choose(model, null).pipe(Effect.mapError((e) => unservable(model, e)))
      })

      /** The version's failure as the model's: where the version lives never shows. */
      const asModel = (chosen: ChosenVersion, failure: ChatProviderFailed) =>
        new ChatProviderFailed({
          candidate_id: chosen.model.id,
          candidate_name: chosen.model.name,
          reason: redact(failure.reason, chosen.secret),
          upstream_status: failure.upstream_status,
          latency_ms: failure.latency_ms
        })

      const complete = Effect.fnUntraced(function*(
        workspaceId: WorkspaceId,
        modelId: string,
        request: ChatRequest
      ) {
        const chosen = yield* chosenFor(workspaceId, modelId)
        const { model } = chosen
        const exchange = exchangeOf(chosen, request)
        // once the version is called the call is paid for: finish and log it even if the caller gives up
        return yield* Effect.uninterruptible(Effect.gen(function*() {
          const called = yield* calls.call(chosen, exchange)
          yield* calls.log(chosen, exchange, called, { message_id: yield* ids.make(InferenceLogId), trace_id: null })
          const { result } = called
          if (Result.isFailure(result)) return yield* asModel(chosen, result.failure)
          return { ...result.success, body: answeredAs(result.success.body, model.name), version_id: chosen.version.id }
        }))
      }, hotSpan("ServiceModels.complete"))

      const stream = Effect.fnUntraced(function*(
        workspaceId: WorkspaceId,
        modelId: string,
        request: ChatRequest,
        options: StreamOptions
      ) {
        const chosen = yield* chosenFor(workspaceId, modelId)
        const exchange = exchangeOf(chosen, request)
        const message_id = yield* ids.make(InferenceLogId)
        const opened = yield* calls.stream(chosen, exchange, { ...options, answerAs: chosen.model.name }, (called) =>
          calls.log(chosen, exchange, called, { message_id, trace_id: null }))
        if (Result.isSuccess(opened)) return opened.success
        yield* calls.log(chosen, exchange, opened.failure, { message_id, trace_id: null })
        return yield* asModel(chosen, opened.failure.result.failure)
      })

      return ServiceModels.of({ complete, stream })
    })
  ).pipe(Layer.provide(VersionCaller.layer))
}
