import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BudgetResetInterval, ExpiresIn, RequestedScopes, TokenStatus, Scope } from "@podium/domain/access"
import { TokenId, UserId, WorkspaceId } from "@podium/domain/shared"
import { Forbidden, NotFound } from "../api/Errors.ts"
import { Label, NullableTimestamp, Timestamp } from "../api/Schemas.ts"
import { SessionAuth } from "../api/Security.ts"

export const TokenView = Schema.Struct({
  id: TokenId,
  business_id: WorkspaceId,
  name: Schema.String,
  prefix: Schema.String.annotate({ description: "The start of the secret, to recognise it; never the secret" }),
  scopes: Schema.Array(Scope),
  status: TokenStatus,
  expires_at: NullableTimestamp,
  budget_limit: Schema.NullOr(Schema.Finite),
  budget_reset_interval: Schema.NullOr(BudgetResetInterval),
  budget_spent_usd: Schema.NullOr(Schema.String).annotate({
    description: "What calls that completed cost in the current budget period, exact decimal USD as a string " +
      "(e.g. \"0.000125\"); null without a budget"
  }),
  budget_reserved_usd: Schema.NullOr(Schema.String).annotate({
    description: "What calls in flight hold of the budget now (each at the most it may cost), exact decimal USD; " +
      "null without a budget"
  }),
  budget_remaining_usd: Schema.NullOr(Schema.String).annotate({
    description: "budget_limit less spent and reserved, never below 0, exact decimal USD; null without a budget"
  }),
  budget_period_start: NullableTimestamp.annotate({
    description: "When the current budget period began (UTC midnight, Monday or the first of the month); null " +
      "without a budget or without a reset interval (the spend then counts from the token's start)"
  }),
  budget_resets_at: NullableTimestamp.annotate({
    description: "When the spend next resets to 0; null without a budget or without a reset interval"
  }),
  created_by: Schema.NullOr(UserId).annotate({
    description: "The user who made the token; null when it was made on the command line"
  }),
  created_by_email: Schema.NullOr(Schema.String).annotate({
    description: "That user's email as they last signed in (null without a creator or an email)"
  }),
  created_by_member: Schema.NullOr(Schema.Boolean).annotate({
    description: "Whether that user still belongs to the workspace. A token belongs to the workspace and keeps " +
      "working after its creator leaves (false here): revoke it if it should not; null without a creator"
  }),
  created_at: Timestamp,
  last_used_at: NullableTimestamp,
  revoked_at: NullableTimestamp
}).annotate({ identifier: "Token" })
export type TokenView = typeof TokenView.Type

export const CreateTokenRequest = Schema.Struct({
  name: Label(200),
  business_id: Schema.optionalKey(WorkspaceId),
  scopes: Schema.optionalKey(RequestedScopes.annotate({
    description: "At least one scope; omit the field for every scope (an empty list is refused)"
  })),
  expires_in: Schema.optionalKey(ExpiresIn),
  budget_limit: Schema.optionalKey(Schema.NullOr(Schema.Number.check(Schema.isFinite(), Schema.isGreaterThanOrEqualTo(0)))),
  budget_reset_interval: Schema.optionalKey(Schema.NullOr(BudgetResetInterval))
})

export const UpdateTokenRequest = Schema.Struct({
  name: Schema.optionalKey(Label(200)),
  expires_at: Schema.optionalKey(NullableTimestamp.annotate({
    description: "A new expiry, in the future (400 otherwise); null: never expires. An expired token given a later " +
      "expiry works again; a revoked one stays revoked."
  })),
  budget_limit: Schema.optionalKey(
    Schema.NullOr(Schema.Number.check(Schema.isFinite(), Schema.isGreaterThanOrEqualTo(0))).annotate({
      description: "USD per period; null: no budget (then budget_reset_interval must be null too). A new limit " +
        "applies at once to what the current period has already spent: lowering it below that spend refuses the " +
        "next calls until the reset."
    })
  ),
  budget_reset_interval: Schema.optionalKey(Schema.NullOr(BudgetResetInterval).annotate({
    description: "A new period keeps the current period's spend: it counts toward the new period's current " +
      "window (the UTC day, week from Monday or month containing now), which resets at the new period's next " +
      "reset. null: the spend never resets. Needs a budget_limit."
  }))
}).annotate({
  description: "Only the fields given change. Scopes cannot change: a token keeps the scopes it was made with " +
    "(make a new token for other scopes, then revoke this one); a `scopes` field is ignored."
})

export const CreatedTokenView = Schema.Struct({
  token: TokenView,
  secret: Schema.String.annotate({ description: "The bearer secret. Shown once; store it now." })
}).annotate({ identifier: "CreatedToken" })
export type CreatedTokenView = typeof CreatedTokenView.Type

const BusinessQuery = { business_id: Schema.optionalKey(WorkspaceId) }
const TokenParams = { token_id: TokenId }
const tokenErrors = [Forbidden, NotFound]

export class TokensApi extends HttpApiGroup.make("tokens")
  .add(
    HttpApiEndpoint.get("list", "/api/tokens", {
      query: BusinessQuery,
      success: Schema.Struct({ business_id: WorkspaceId, tokens: Schema.Array(TokenView) }),
      error: Forbidden
    }).annotate(OpenApi.Summary, "List the workspace's API tokens (never their secrets)"),
    HttpApiEndpoint.post("create", "/api/tokens", {
      payload: CreateTokenRequest,
      success: CreatedTokenView.pipe(HttpApiSchema.status(201)),
      error: Forbidden
    }).annotate(OpenApi.Summary, "Create an API token; the secret is returned once"),
    HttpApiEndpoint.post("revoke", "/api/tokens/:token_id/revoke", {
      params: TokenParams,
      success: Schema.Struct({ token: TokenView }),
      error: tokenErrors
    }).annotate(OpenApi.Summary, "Revoke an API token (idempotent)"),
    HttpApiEndpoint.patch("update", "/api/tokens/:token_id", {
      params: TokenParams,
      payload: UpdateTokenRequest,
      success: Schema.Struct({ token: TokenView }),
      error: tokenErrors
    }).annotateMerge(OpenApi.annotations({
      summary: "Change an API token's name, expiry or budget",
      description: "Owners and admins of the token's workspace, as for create and revoke. Only the fields given " +
        "change; scopes never do. The answer shows the token with its current budget period: spent, reserved, " +
        "remaining and the next reset. Changing the limit keeps the period's spend; changing the reset interval " +
        "carries it into the new interval's current period. Two changes at once both land (the row is locked). " +
        "400 for a negative limit, an expiry not in the future, an unknown interval or an interval without a " +
        "limit; 404 for an unknown token or one of another workspace."
    })),
    HttpApiEndpoint.delete("remove", "/api/tokens/:token_id", {
      params: TokenParams,
      success: Schema.Struct({ id: TokenId, deleted: Schema.Literal(true) }),
      error: tokenErrors
    }).annotate(OpenApi.Summary, "Delete an API token")
  )
  .middleware(SessionAuth)
  .annotateMerge(OpenApi.annotations({
    title: "API Tokens",
    description: "Owners and admins manage the workspace's API tokens. The secret is returned once, at creation. " +
      "Tokens belong to the workspace, not to whoever made them: removing a member leaves their tokens working, " +
      "so each token shows its creator (`created_by`, `created_by_email`, `created_by_member`) to tell what to revoke."
  }))
{}
