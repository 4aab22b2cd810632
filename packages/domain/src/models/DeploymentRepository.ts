import { Context, type DateTime, type Effect } from "effect"
import type { ModelId, ModelVersionId } from "../shared/index.ts"
import type { Deployment } from "./Deployment.ts"

/**
 * Deployments of versions. `start` marks a version `deploying` with its settings (from `none`,
 * `failed` or `stopped`; false when it is deploying or active already, or not the model's);
 * `finish` ends a deploying version: `active` (the model's active version before it becomes
 * `stopped`, in the same transaction) or `failed` with the reason.
 */
export class DeploymentRepository extends Context.Service<DeploymentRepository, {
  readonly start: (modelId: ModelId, versionId: ModelVersionId, deployment: Deployment, now: DateTime.Utc) => Effect.Effect<boolean>
  /** Versions deploying since before `cutoff` (their check may never have been enqueued), with when they were asked. */
  readonly deployingBefore: (cutoff: DateTime.Utc) => Effect.Effect<ReadonlyArray<{ readonly id: ModelVersionId; readonly requested_at: DateTime.Utc }>>
  /**
   * Stops the model's version if its deployment is `active` (it becomes `stopped`: nothing of it runs
   * outside Podium, so Podium no longer routing to it is the whole of stopping); false otherwise.
   */
  readonly stop: (modelId: ModelId, versionId: ModelVersionId) => Effect.Effect<boolean>
  readonly finish: (
    versionId: ModelVersionId,
    outcome: { readonly status: "active" } | { readonly status: "failed"; readonly error: string },
    now: DateTime.Utc
  ) => Effect.Effect<boolean>
}>()("@podium/domain/models/DeploymentRepository") {}
