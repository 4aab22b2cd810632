import { Context, type Effect } from "effect"

/** Runs a deployment durably (its check may take a while); resumed after a restart. */
export class DeploymentQueue extends Context.Service<DeploymentQueue, {
  /** `requestedAt` tells one deployment of a version from a later one. */
  readonly enqueue: (versionId: string, requestedAt: string) => Effect.Effect<void>
}>()("@podium/domain/models/DeploymentQueue") {}
