import { Context, type DateTime, type Effect, type Option } from "effect"
import type { LeaderboardId } from "../leaderboards/index.ts"
import type { ModelId, ModelVersionId, WorkspaceId } from "../shared/index.ts"
import type { Trainer } from "./BaseModel.ts"
import type { Deployment } from "./Deployment.ts"
import type { Artifact, DeploymentStatus } from "./ModelVersion.ts"

/**
 * Serving copies: read on every model inference, so an instance keeps them and the database's
 * change announcements (model, versions' deployments, webhook) keep them current.
 */
export class ModelServing extends Context.Service<ModelServing, {
  readonly snapshot: (modelId: string) => Effect.Effect<Option.Option<ServingModel>>
  /** Any version of the model (an exact-version call names one that may not be active). */
  readonly version: (modelId: string, versionId: ModelVersionId) => Effect.Effect<Option.Option<ServedVersion>>
}>()("@podium/domain/models/ModelServing") {}

/** A version that serves (or is being deployed), as model inference reads it. */
export interface ServedVersion {
  readonly id: ModelVersionId
  readonly trainer: Trainer
  readonly artifact: Artifact
  readonly deployment_status: DeploymentStatus
  readonly deployment: Deployment | null
  readonly deployed_at: DateTime.Utc | null
}

/** What serving a model needs on every call. */
export interface ServingModel {
  readonly id: ModelId
  readonly workspace_id: WorkspaceId
  readonly name: string
  readonly leaderboard_ids: ReadonlyArray<LeaderboardId>
  readonly fine_tuned: boolean
  /** Versions whose deployment is active, the most recently deployed first. */
  readonly active: ReadonlyArray<ServedVersion>
  readonly webhook_enabled: boolean
}
