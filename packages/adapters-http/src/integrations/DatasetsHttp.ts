import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { HubDatasetCheck } from "@podium/domain/integrations"
import { Api } from "../api/Api.ts"
import { HubCheckView } from "./DatasetsApi.ts"
import { CurrentPrincipal } from "../api/Security.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"

export const DatasetsHttp = HttpApiBuilder.group(
  Api,
  "datasets",
  Effect.fn(function*(handlers) {
    const hub = yield* HubDatasetCheck
    return handlers.handle("hubCheck", ({ payload }) =>
      Effect.gen(function*() {
        const result = yield* hub.check(yield* CurrentPrincipal, payload)
        return HubCheckView.make({
          dataset_url: payload.dataset_url,
          dataset_id: result.dataset.id,
          business_id: result.workspaceId,
          valid: true,
          private: result.dataset.private,
          gated: result.dataset.gated,
          rows: result.dataset.rows,
          splits: result.dataset.splits,
          meets_min_rows: result.meetsMinimumRows,
          used_integration: result.usedIntegration
        })
      }).pipe(mapDomainErrors))
  })
)
