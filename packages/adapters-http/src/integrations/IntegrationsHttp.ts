import { Effect, Redacted } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Integrations } from "@podium/domain/integrations"
import { Api } from "../api/Api.ts"
import { IntegrationView } from "./IntegrationsApi.ts"
import { CurrentPrincipal } from "../api/Security.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"

export const IntegrationsHttp = HttpApiBuilder.group(
  Api,
  "integrations",
  Effect.fn(function*(handlers) {
    const integrations = yield* Integrations
    return handlers.handle("validate", ({ payload }) =>
      Effect.gen(function*() {
        const result = yield* integrations.validate(yield* CurrentPrincipal, {
          provider: payload.provider,
          token: Redacted.make(payload.token),
          business_id: payload.business_id
        })
        return IntegrationView.make({
          provider: payload.provider,
          valid: true,
          stored: true,
          has_token: true,
          business_id: result.workspaceId,
          account: { label: result.account.label, details: result.account.details },
          validated_at: result.validatedAt
        })
      }).pipe(mapDomainErrors))
  })
)
