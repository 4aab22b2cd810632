import { Effect, Redacted } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Integrations } from "@podium/domain/integrations"
import { Api } from "../api/Api.ts"
import { IntegrationView, StoredIntegrationView } from "./IntegrationsApi.ts"
import { CurrentPrincipal } from "../api/Security.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"

export const IntegrationsHttp = HttpApiBuilder.group(
  Api,
  "integrations",
  Effect.fn(function*(handlers) {
    const integrations = yield* Integrations
    return handlers
      .handle("list", ({ query }) =>
        Effect.gen(function*() {
          const found = yield* integrations.list(yield* CurrentPrincipal, query.business_id)
          return {
            business_id: found.workspaceId,
            // Field by field, so the sealed token cannot reach the reply.
            integrations: found.integrations.map((i) =>
              StoredIntegrationView.make({
                provider: i.provider,
                key_hint: i.key_hint,
                account: { label: i.label, details: i.details },
                validated_at: i.validated_at,
                validated_by: i.validated_by
              })
            )
          }
        }).pipe(mapDomainErrors))
      .handle("remove", ({ params, query }) =>
        Effect.gen(function*() {
          yield* integrations.remove(yield* CurrentPrincipal, params.provider, query.business_id)
        }).pipe(mapDomainErrors))
      .handle("validate", ({ payload }) =>
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
