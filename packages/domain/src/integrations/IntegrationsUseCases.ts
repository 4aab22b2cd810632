import { Layer } from "effect"
import { HubDatasetCheck } from "./HubDatasetCheck.ts"
import { Integrations } from "./Integrations.ts"

/** The integrations context wired: its use cases over its ports (integrations, their verifier, the hub's datasets). */
export const IntegrationsUseCases = {
  layer: Layer.mergeAll(Integrations.layer, HubDatasetCheck.layer)
}
