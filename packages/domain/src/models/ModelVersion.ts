import { Schema } from "effect"
import { type ChatMessage, FineTuneRunId, ModelId, ModelVersionId, type RequestMessage } from "../shared/index.ts"
import { BaseModel, Trainer } from "./BaseModel.ts"
import { Deployment } from "./Deployment.ts"

export const DeploymentStatus = Schema.Literals(["none", "deploying", "active", "failed", "stopped"])
export type DeploymentStatus = typeof DeploymentStatus.Type

/** A chat example: the conversation as a model is asked it, and the reference answer. */
export const Demonstration = Schema.Struct({
  messages: Schema.Array(Schema.Struct({ role: Schema.String, content: Schema.String }))
})
export type Demonstration = typeof Demonstration.Type

/**
 * What a version is, privately: the provider's tuned model (`openai`), or a prompt program of
 * demonstrations in front of the base model (`few_shot`: no weights change). Never shown.
 */
export const Artifact = Schema.Union([
  Schema.Struct({ kind: Schema.Literal("openai"), model: Schema.String }),
  Schema.Struct({
    kind: Schema.Literal("few_shot"),
    base_model: Schema.String,
    demonstrations: Schema.Array(Demonstration)
  })
])
export type Artifact = typeof Artifact.Type

/** Immutable once created: only its deployment changes (deployment is not the version). */
export class ModelVersion extends Schema.Class<ModelVersion>("ModelVersion")({
  id: ModelVersionId,
  model_id: ModelId,
  fine_tune_run_id: FineTuneRunId,
  trainer: Trainer,
  base_model: BaseModel,
  metrics: Schema.Record(Schema.String, Schema.Unknown),
  artifact: Artifact,
  deployment_status: DeploymentStatus,
  /** The settings of its latest deployment, if it was ever deployed. */
  deployment: Schema.NullOr(Deployment),
  /** Why its latest deployment failed. */
  deployment_error: Schema.NullOr(Schema.String),
  deployed_at: Schema.NullOr(Schema.DateTimeUtc),
  created_at: Schema.DateTimeUtc,
  completed_at: Schema.DateTimeUtc
}) {}

/**
 * The conversation a `few_shot` version sends its base model: the demonstrations as earlier turns
 * (user, then the reference as the assistant's answer), after any system message and before the
 * caller's own messages.
 */
export const withDemonstrations = <M extends RequestMessage>(
  demonstrations: ReadonlyArray<Demonstration>,
  messages: ReadonlyArray<M>
): ReadonlyArray<M | ChatMessage> => {
  const system = messages.filter((m) => m.role === "system")
  const rest = messages.filter((m) => m.role !== "system")
  const turns = demonstrations.flatMap((d) => d.messages.filter((m) => m.role !== "system"))
  return [...system, ...turns, ...rest]
}
