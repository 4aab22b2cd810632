import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AutoSelection } from "@podium/domain/runs"
import { Api } from "../api/Api.ts"
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
      }).pipe(mapDomainErrors))
  })
)
