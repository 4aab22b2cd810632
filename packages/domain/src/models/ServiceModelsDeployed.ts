import { Effect, Layer, Option, Result } from "effect"
import { type ChatRequest, ChatProviderFailed, ServiceModels } from "../inference/index.ts"
import { hotSpan, IdGenerator, NotFound, type WorkspaceId } from "../shared/index.ts"
import { InferenceLogId } from "./InferenceLog.ts"
import { ModelServing } from "./ModelServing.ts"
import { answeredAs, exchangeOf, redact, unservable, VersionCaller } from "./VersionCaller.ts"

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

      const complete = Effect.fnUntraced(function*(
        workspaceId: WorkspaceId,
        modelId: string,
        request: ChatRequest
      ) {
        const found = yield* serving.snapshot(modelId)
        if (Option.isNone(found) || found.value.workspace_id !== workspaceId) {
          return yield* unservable({ id: modelId, name: modelId }, new NotFound({ resource: "model", id: modelId }))
        }
        const model = found.value
        const chosen = yield* calls.choose(model, null).pipe(Effect.mapError((e) => unservable(model, e)))
        const exchange = exchangeOf(chosen, request)
        // once the version is called the call is paid for: finish and log it even if the caller gives up
        return yield* Effect.uninterruptible(Effect.gen(function*() {
          const called = yield* calls.call(chosen, exchange)
          yield* calls.log(chosen, exchange, called, { message_id: yield* ids.make(InferenceLogId), trace_id: null })
          const { result } = called
          if (Result.isFailure(result)) {
            return yield* new ChatProviderFailed({
              candidate_id: model.id,
              candidate_name: model.name,
              reason: redact(result.failure.reason, chosen.secret),
              upstream_status: result.failure.upstream_status,
              latency_ms: result.failure.latency_ms
            })
          }
          return { ...result.success, body: answeredAs(result.success.body, model.name), version_id: chosen.version.id }
        }))
      }, hotSpan("ServiceModels.complete"))

      return ServiceModels.of({ complete })
    })
  ).pipe(Layer.provide(VersionCaller.layer))
}
