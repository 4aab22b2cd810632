import { Context, type Effect, type Option, type Redacted } from "effect"
import type { HubDatasetId, HubDatasetInfo, HubDatasetNotFound } from "./HubDataset.ts"
import type { IntegrationUnavailable } from "./IntegrationErrors.ts"

/** Reads dataset metadata from the hub; `token` opens private and gated datasets the token may see. */
export class HubDatasets extends Context.Service<HubDatasets, {
  readonly describe: (
    id: HubDatasetId,
    token: Option.Option<Redacted.Redacted<string>>
  ) => Effect.Effect<HubDatasetInfo, HubDatasetNotFound | IntegrationUnavailable>
}>()("@podium/domain/integrations/HubDatasets") {}
