import { Effect, Layer, Option } from "effect"
import { ModelDirectory } from "../leaderboards/index.ts"
import { ModelRepository } from "./ModelRepository.ts"

/** The leaderboards' view of models: a model exists for a workspace when it is one of its own and not deleted. */
export const ModelDirectoryModels = {
  layer: Layer.effect(
    ModelDirectory,
    Effect.gen(function*() {
      const models = yield* ModelRepository
      return ModelDirectory.of({
        exists: (workspaceId, modelId) =>
          Effect.map(models.find(modelId), Option.exists((m) => m.workspace_id === workspaceId))
      })
    })
  )
}
