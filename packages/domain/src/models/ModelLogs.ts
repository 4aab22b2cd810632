import { Context, Effect, Layer } from "effect"
import type { Principal } from "../access/index.ts"
import type { ModelId, NotFound } from "../shared/index.ts"
import { type InferenceLog, maxLogsPerPage } from "./InferenceLog.ts"
import { InferenceLogReader } from "./InferenceLogReader.ts"
import { Models } from "./Models.ts"

/** A model's inference logs, for those who can see the model. */
export class ModelLogs extends Context.Service<ModelLogs, {
  readonly list: (principal: Principal, modelId: ModelId, limit: number | undefined) => Effect.Effect<ReadonlyArray<InferenceLog>, NotFound>
}>()("@podium/domain/models/ModelLogs") {
  static readonly layer = Layer.effect(
    ModelLogs,
    Effect.gen(function*() {
      const models = yield* Models
      const reader = yield* InferenceLogReader
      return ModelLogs.of({
        list: Effect.fn("ModelLogs.list")(function*(principal: Principal, modelId: ModelId, limit: number | undefined) {
          const model = yield* models.visible(principal, modelId)
          return yield* reader.list(model.id, Math.min(limit ?? maxLogsPerPage, maxLogsPerPage))
        })
      })
    })
  )
}
