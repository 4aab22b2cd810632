import { Effect, Layer, Option, Schema } from "effect"
import { ModelDirectory } from "../leaderboards/index.ts"
import { ModelId } from "../shared/index.ts"
import { ModelRepository } from "./ModelRepository.ts"

// a Service candidate's model_id is any string; one that is no ModelId names no model
const modelIdOf = Schema.decodeUnknownOption(ModelId)

/** The leaderboards' view of models: a model exists for a workspace when it is one of its own and not deleted. */
export const ModelDirectoryModels = {
  layer: Layer.effect(
    ModelDirectory,
    Effect.gen(function*() {
      const models = yield* ModelRepository
      return ModelDirectory.of({
        exists: (workspaceId, modelId) =>
          Option.match(modelIdOf(modelId), {
            onNone: () => Effect.succeed(false),
            onSome: (id) => Effect.map(models.find(id), Option.exists((m) => m.workspace_id === workspaceId))
          })
      })
    })
  )
}
