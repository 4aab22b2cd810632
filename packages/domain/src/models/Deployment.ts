import { Context, type DateTime, type Effect, type Option, Result, Schema } from "effect"
import { InvalidInput } from "../shared/index.ts"
import type { Artifact, DeploymentStatus } from "./ModelVersion.ts"
import type { Trainer } from "./BaseModel.ts"

/** Deploy options of the spec, all optional; the ranges are the spec's. */
export const DeployOptions = Schema.Struct({
  max_workers: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100 }))),
  active_workers: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100 }))),
  default_max_new_tokens: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 4096 }))),
  idle_timeout: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3600 })))
})
export type DeployOptions = typeof DeployOptions.Type

/** A deployment's settings, as stored with the version. */
export const Deployment = Schema.Struct({
  /** Calls served at once, per instance; more wait their turn. */
  max_workers: Schema.Int,
  /** Workers kept ready while idle. */
  active_workers: Schema.Int,
  /** `max_tokens` of a call that sets none. */
  default_max_new_tokens: Schema.Int,
  /** Seconds an idle worker above `active_workers` is kept. */
  idle_timeout: Schema.Int
})
export type Deployment = typeof Deployment.Type

export const defaultDeployment: Deployment = { max_workers: 4, active_workers: 0, default_max_new_tokens: 512, idle_timeout: 300 }

/** The options with their defaults; `active_workers` may not exceed `max_workers`. */
export const deploymentOf = (options: DeployOptions): Result.Result<Deployment, InvalidInput> => {
  const deployment = { ...defaultDeployment, ...options }
  return deployment.active_workers > deployment.max_workers
    ? Result.fail(new InvalidInput({ message: "active_workers must be at most max_workers", path: ["active_workers"] }))
    : Result.succeed(deployment)
}

/**
 * A version's deployment moves `none | failed | stopped` → `deploying` (a deploy) → `active` (its
 * check answered) or `failed`; an `active` one becomes `stopped` when a newer deployment of its
 * model becomes active. Only a version that is not deploying or active can be deployed.
 */
export const deployable = (status: DeploymentStatus): boolean => status === "none" || status === "failed" || status === "stopped"

/** A version that serves (or is being deployed), as model inference reads it. */
export interface ServedVersion {
  readonly id: string
  readonly trainer: Trainer
  readonly artifact: Artifact
  readonly deployment_status: DeploymentStatus
  readonly deployment: Deployment | null
  readonly deployed_at: DateTime.Utc | null
}

/** What serving a model needs on every call. */
export interface ServingModel {
  readonly id: string
  readonly workspace_id: string
  readonly name: string
  readonly leaderboard_ids: ReadonlyArray<string>
  readonly fine_tuned: boolean
  /** Versions whose deployment is active, the most recently deployed first. */
  readonly active: ReadonlyArray<ServedVersion>
  readonly webhook_enabled: boolean
}

/**
 * Serving copies: read on every model inference, so an instance keeps them and the database's
 * change announcements (model, versions' deployments, webhook) keep them current.
 */
export class ModelServing extends Context.Service<ModelServing, {
  readonly snapshot: (modelId: string) => Effect.Effect<Option.Option<ServingModel>>
  /** Any version of the model (an exact-version call names one that may not be active). */
  readonly version: (modelId: string, versionId: string) => Effect.Effect<Option.Option<ServedVersion>>
}>()("@podium/domain/models/ModelServing") {}

/**
 * Deployments of versions. `start` marks a version `deploying` with its settings (from `none`,
 * `failed` or `stopped`; false when it is deploying or active already, or not the model's);
 * `finish` ends a deploying version: `active` (the model's active version before it becomes
 * `stopped`, in the same transaction) or `failed` with the reason.
 */
export class DeploymentRepository extends Context.Service<DeploymentRepository, {
  readonly start: (modelId: string, versionId: string, deployment: Deployment, now: DateTime.Utc) => Effect.Effect<boolean>
  /** Versions deploying since before `cutoff` (their check may never have been enqueued), with when they were asked. */
  readonly deployingBefore: (cutoff: DateTime.Utc) => Effect.Effect<ReadonlyArray<{ readonly id: string; readonly requested_at: DateTime.Utc }>>
  readonly finish: (
    versionId: string,
    outcome: { readonly status: "active" } | { readonly status: "failed"; readonly error: string },
    now: DateTime.Utc
  ) => Effect.Effect<boolean>
}>()("@podium/domain/models/DeploymentRepository") {}

/** Runs a deployment durably (its check may take a while); resumed after a restart. */
export class DeploymentQueue extends Context.Service<DeploymentQueue, {
  /** `requestedAt` tells one deployment of a version from a later one. */
  readonly enqueue: (versionId: string, requestedAt: string) => Effect.Effect<void>
}>()("@podium/domain/models/DeploymentQueue") {}
