import { Layer } from "effect"
import { RunDatasets } from "../runs/index.ts"
import { BaseModels } from "./BaseModels.ts"
import { Deployments } from "./Deployments.ts"
import { FineTunes } from "./FineTunes.ts"
import { FineTuneScheduler } from "./FineTuneScheduler.ts"
import { FineTuneSteps } from "./FineTuneSteps.ts"
import { ModelInference } from "./ModelInference.ts"
import { ModelLogs } from "./ModelLogs.ts"
import { Models } from "./Models.ts"
import { ModelWebhooks } from "./ModelWebhooks.ts"

/**
 * The models context wired: its use cases over its ports (models, fine-tunes, deployments, serving,
 * inference logs, webhooks, the queues) and the services of the contexts it builds on. What it
 * offers other contexts (ServiceModelsDeployed, ModelDirectoryModels) the composition provides.
 */
export const ModelsUseCases = {
  layer: Layer.mergeAll(
    Layer.mergeAll(
      FineTunes.layer,
      FineTuneSteps.layer,
      FineTuneScheduler.layer,
      Deployments.layer,
      ModelLogs.layer,
      ModelWebhooks.layer
    ).pipe(
      Layer.provideMerge(Models.layer),
      Layer.provide(Layer.mergeAll(BaseModels.layer, RunDatasets.layer))
    ),
    ModelInference.layer
  )
}
