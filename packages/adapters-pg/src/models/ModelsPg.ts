import { Layer } from "effect"
import { DeploymentHistoryPg } from "./DeploymentHistoryPg.ts"
import { DeploymentRepositoryPg } from "./DeploymentRepositoryPg.ts"
import { FineTuneRepositoryPg } from "./FineTuneRepositoryPg.ts"
import { InferenceLogReaderPg } from "./InferenceLogReaderPg.ts"
import { InferenceLogWriterPg } from "./InferenceLogWriterPg.ts"
import { ModelRepositoryPg } from "./ModelRepositoryPg.ts"
import { ModelServingPg } from "./ModelServingPg.ts"
import { WebhookOutboxPg } from "./WebhookOutboxPg.ts"
import { WebhookRepositoryPg } from "./WebhookRepositoryPg.ts"

/** The models context's ports on Postgres. */
export const ModelsPg = {
  layer: Layer.mergeAll(
    ModelRepositoryPg.layer,
    FineTuneRepositoryPg.layer,
    DeploymentRepositoryPg.layer,
    DeploymentHistoryPg.layer,
    ModelServingPg.layer,
    InferenceLogWriterPg.layer,
    InferenceLogReaderPg.layer,
    WebhookRepositoryPg.layer,
    WebhookOutboxPg.layer
  )
}
