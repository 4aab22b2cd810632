import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { WorkspaceId } from "@podium/domain/shared"
import { IntegrationProvider } from "@podium/domain/integrations"
import { Forbidden, UpstreamError } from "../api/Errors.ts"
import { InvalidIntegrationToken } from "./IntegrationsErrors.ts"
import { Timestamp } from "../api/Schemas.ts"
import { SessionAuth } from "../api/Security.ts"

export const ValidateIntegrationRequest = Schema.Struct({
  provider: IntegrationProvider,
  token: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(4096)),
  business_id: Schema.optionalKey(WorkspaceId)
})

export const IntegrationView = Schema.Struct({
  provider: IntegrationProvider,
  valid: Schema.Literal(true),
  stored: Schema.Literal(true),
  has_token: Schema.Literal(true),
  business_id: WorkspaceId,
  account: Schema.Struct({
    label: Schema.NullOr(Schema.String),
    details: Schema.Record(Schema.String, Schema.Unknown)
  }),
  validated_at: Timestamp
}).annotate({ identifier: "Integration" })
export type IntegrationView = typeof IntegrationView.Type

export class IntegrationsApi extends HttpApiGroup.make("integrations")
  .add(
    HttpApiEndpoint.post("validate", "/api/integrations/validate", {
      payload: ValidateIntegrationRequest,
      success: IntegrationView,
      error: [Forbidden, InvalidIntegrationToken, UpstreamError]
    }).annotate(OpenApi.Summary, "Validate and store a provider token").annotateMerge(OpenApi.annotations({
      description: "Checks the token with the provider (router: its key-check endpoint; hub: whoami). " +
        "A valid token is stored encrypted as the workspace's integration for that provider. " +
        "A token the provider refuses is a 400 `invalid_integration_token` with the provider's reason; " +
        "a provider that cannot be reached is a 502 `upstream_error`."
    }))
  )
  .middleware(SessionAuth)
  .annotateMerge(OpenApi.annotations({ title: "Integrations" }))
{}
