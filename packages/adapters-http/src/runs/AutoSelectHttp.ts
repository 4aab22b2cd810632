import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AutoSelection } from "@podium/domain/runs"
import { Api } from "../api/Api.ts"
import { apiError, RouterIntegrationMissing } from "../api/Errors.ts"
import { CurrentPrincipal } from "../api/Security.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"

export const AutoSelectHttp = HttpApiBuilder.group(
  Api,
  "autoSelect",
  Effect.fn(function*(handlers) {
    const autoSelection = yield* AutoSelection
    return handlers.handle("select", ({ params, payload }) =>
      Effect.gen(function*() {
        const result = yield* autoSelection.select(yield* CurrentPrincipal, params.leaderboard_id, payload)
        return {
          added: result.added.map((candidate) => ({ ...candidate })),
          considered: result.considered,
          rejected_by: result.rejected_by
        }
      }).pipe(
        // the one error of this route the shared mapping does not know
        Effect.catch((e) =>
          Effect.gen(function*() {
            if (e._tag !== "RouterIntegrationMissing") return yield* mapDomainErrors(Effect.fail(e))
            return yield* Effect.fail(apiError(
              RouterIntegrationMissing,
              "The workspace has no router integration: an owner or admin adds one with POST /api/integrations/validate " +
                "{\"provider\": \"router\", \"token\": \"...\"}",
              { business_id: e.workspace_id }
            ))
          })
        )
      ))
  })
)
