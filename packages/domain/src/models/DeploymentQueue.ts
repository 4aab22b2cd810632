import { Context, type Effect } from "effect"
import type { ModelVersionId } from "../shared/index.ts"

/** Runs a deployment durably (its check may take a while); resumed after a restart. */
export class DeploymentQueue extends Context.Service<DeploymentQueue, {
  /** `requestedAt` tells one deployment of a version from a later one. */
  readonly enqueue: (versionId: ModelVersionId, requestedAt: string) => Effect.Effect<void>
}>()("@podium/domain/models/DeploymentQueue") {}
