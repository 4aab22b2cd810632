import { Context, type Effect, type Redacted } from "effect"
import type { IntegrationUnavailable } from "../integrations/index.ts"

/** One model of the router's catalogue, as listed; prices are the catalogue's own unit. */
export interface CatalogueModel {
  readonly id: string
  /** The display name, when the catalogue gives one. */
  readonly name: string | null
  /** USD per prompt token; null when not a finite, non-negative price (missing, or the router's -1 for variable prices). */
  readonly prompt_price: number | null
  /** USD per completion token; null as for `prompt_price`. */
  readonly completion_price: number | null
  /** The model's repository on the hub; non-empty means open weights. */
  readonly hugging_face_id: string | null
}

/** Latency percentiles of one endpoint (provider) of a model over the last 30 minutes, in milliseconds. */
export interface EndpointLatency {
  readonly p50: number | null
  readonly p75: number | null
  readonly p90: number | null
  readonly p99: number | null
}

/**
 * The router's public model catalogue (`GET {ROUTER_BASE_URL}/models`) and per-model endpoint
 * statistics (`GET {ROUTER_BASE_URL}/models/{id}/endpoints`), asked with the workspace's router
 * token. `latency` lists only endpoints that report latency; a model the router does not know has
 * none. Unavailable means the router could not be asked or answered something unreadable.
 */
export class RouterCatalogue extends Context.Service<RouterCatalogue, {
  readonly models: (token: Redacted.Redacted<string>) => Effect.Effect<ReadonlyArray<CatalogueModel>, IntegrationUnavailable>
  readonly latency: (
    modelId: string,
    token: Redacted.Redacted<string>
  ) => Effect.Effect<ReadonlyArray<EndpointLatency>, IntegrationUnavailable>
}>()("@podium/domain/runs/RouterCatalogue") {}
