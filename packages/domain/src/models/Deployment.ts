import { Result, Schema } from "effect"
import { InvalidInput } from "../shared/index.ts"
import type { DeploymentStatus } from "./ModelVersion.ts"

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
