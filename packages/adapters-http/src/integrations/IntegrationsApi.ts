import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { UserId, WorkspaceId } from "@podium/domain/shared"
import { IntegrationProvider } from "@podium/domain/integrations"
import { Forbidden, NotFound, UpstreamError } from "../api/Errors.ts"
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

/** A stored integration as read back: never the token, at most its last four characters. */
export const StoredIntegrationView = Schema.Struct({
  provider: IntegrationProvider,
  key_hint: Schema.NullOr(Schema.String).annotate({
    description: "The token's last four characters as `…abcd`, to tell keys apart; null for a token shorter than 16 " +
      "characters and for an integration stored before hints were kept (validate it again to get one)"
  }),
  account: Schema.Struct({
    label: Schema.NullOr(Schema.String),
    details: Schema.Record(Schema.String, Schema.Unknown)
  }).annotate({ description: "What the provider reported about the token's account when it was last validated" }),
  validated_at: Timestamp.annotate({
    description: "When the provider last accepted the token; it was stored then (a token is stored only once accepted)"
  }),
  validated_by: Schema.NullOr(UserId).annotate({ description: "Who validated it (null once that user is gone)" })
}).annotate({ identifier: "StoredIntegration" })
export type StoredIntegrationView = typeof StoredIntegrationView.Type

const BusinessQuery = { business_id: Schema.optionalKey(WorkspaceId) }

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
    })),
    HttpApiEndpoint.get("list", "/api/integrations", {
      query: BusinessQuery,
      success: Schema.Struct({ business_id: WorkspaceId, integrations: Schema.Array(StoredIntegrationView) }),
      error: Forbidden
    }).annotateMerge(OpenApi.annotations({
      summary: "List the workspace's provider integrations (never their tokens)",
      description: "Each stored integration (at most one per provider, by provider name) with when it was last " +
        "validated, by whom, what the provider reported, and `key_hint`, the token's last four characters. " +
        "The token itself is never returned. Owners and admins of the workspace (`business_id`, default the " +
        "caller's personal one); a member is refused 403 `forbidden`."
    })),
    HttpApiEndpoint.delete("remove", "/api/integrations/:provider", {
      params: { provider: IntegrationProvider },
      query: BusinessQuery,
      success: HttpApiSchema.NoContent,
      error: [Forbidden, NotFound]
    }).annotateMerge(OpenApi.annotations({
      summary: "Remove a provider integration",
      description: "Deletes the workspace's stored token for the provider (204). The workspace's " +
        "Router or Hub candidates without their own token, judges, auto-selection, base " +
        "models and hub dataset reads call the provider without a token from their next call (this instance at " +
        "once, other instances as soon as the database announces the change; a run's chunk of rows already under " +
        "way finishes with the token it started with). 404 `not_found` when the workspace has none for the " +
        "provider. Owners and admins; a member is refused 403 `forbidden`."
    }))
  )
  .middleware(SessionAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Integrations",
    description: "The workspace's provider tokens (router and hub), checked with the provider and stored encrypted, " +
      "for candidates and judges that have none of their own."
  }))
{}
