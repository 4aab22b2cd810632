import { Context, Effect, Layer, Option } from "effect"
import { type Forbidden, type Principal, workspaceOf } from "../access/index.ts"
import { type InvalidInput, type WorkspaceId, SecretCipher } from "../shared/index.ts"
import { type HubDatasetInfo, type HubDatasetNotFound, minimumDatasetRows, parseHubDatasetUrl } from "./HubDataset.ts"
import type { IntegrationUnavailable } from "./IntegrationErrors.ts"
import { HubDatasets } from "./HubDatasets.ts"
import { IntegrationRepository } from "./IntegrationRepository.ts"

export interface HubCheck {
  readonly workspaceId: WorkspaceId
  readonly dataset: HubDatasetInfo
  readonly usedIntegration: boolean
  /** Whether the dataset has the rows a model assignment needs (unknown counts as no). */
  readonly meetsMinimumRows: boolean
}

/** Checks that a hub dataset exists and can be read, with the workspace's hub integration if it has one. */
export class HubDatasetCheck extends Context.Service<HubDatasetCheck, {
  readonly check: (
    principal: Principal,
    input: { readonly dataset_url: string; readonly business_id?: WorkspaceId | undefined }
  ) => Effect.Effect<HubCheck, Forbidden | InvalidInput | HubDatasetNotFound | IntegrationUnavailable>
}>()("@podium/domain/integrations/HubDatasetCheck") {
  static readonly layer = Layer.effect(
    HubDatasetCheck,
    Effect.gen(function*() {
      const hub = yield* HubDatasets
      const integrations = yield* IntegrationRepository
      const cipher = yield* SecretCipher

      const check = Effect.fn("HubDatasetCheck.check")(function*(
        principal: Principal,
        input: { readonly dataset_url: string; readonly business_id?: WorkspaceId | undefined }
      ) {
        const workspaceId = yield* workspaceOf(principal, input.business_id)
        const id = yield* Effect.fromResult(parseHubDatasetUrl(input.dataset_url))
        const integration = yield* integrations.find(workspaceId, "hub")
        const token = Option.isSome(integration)
          ? Option.some(yield* cipher.open(integration.value.sealed_token))
          : Option.none()
        const dataset = yield* hub.describe(id, token)
        return {
          workspaceId,
          dataset,
          usedIntegration: Option.isSome(token),
          meetsMinimumRows: dataset.rows !== null && dataset.rows >= minimumDatasetRows
        }
      })

      return HubDatasetCheck.of({ check })
    })
  )
}
