import { BigDecimal, DateTime, Effect, Redacted } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { type DescribedToken, statusAt, ApiTokens } from "@podium/domain/access"
import { Api } from "../api/Api.ts"
import { CurrentPrincipal } from "../api/Security.ts"
import { CreatedTokenView, TokenView } from "./TokensApi.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"

/** Exact decimal USD for the wire: no float rounding, no trailing zeros. */
const usd = (amount: BigDecimal.BigDecimal) => BigDecimal.format(BigDecimal.normalize(amount))

const remaining = (limit: number, spent: BigDecimal.BigDecimal) =>
  usd(BigDecimal.max(BigDecimal.fromBigInt(0n), BigDecimal.subtract(BigDecimal.fromNumberUnsafe(limit), spent)))

export const tokenView = ({ creator, spend, token }: DescribedToken, now: DateTime.Utc) =>
  TokenView.make({
    id: token.id,
    business_id: token.workspace_id,
    name: token.name,
    prefix: token.display_prefix,
    scopes: token.scopes,
    status: statusAt(token, now),
    expires_at: token.expires_at,
    budget_limit: token.budget_limit,
    budget_reset_interval: token.budget_reset_interval,
    budget_spent_usd: spend === null ? null : usd(spend.settled),
    budget_reserved_usd: spend === null ? null : usd(spend.reserved),
    budget_remaining_usd: spend === null || token.budget_limit === null
      ? null
      : remaining(token.budget_limit, BigDecimal.sum(spend.settled, spend.reserved)),
    budget_period_start: spend?.period_start ?? null,
    budget_resets_at: spend?.resets_at ?? null,
    created_by: token.created_by,
    created_by_email: creator?.email ?? null,
    created_by_member: creator?.member ?? null,
    created_at: token.created_at,
    last_used_at: token.last_used_at,
    revoked_at: token.revoked_at
  })


export const TokensHttp = HttpApiBuilder.group(
  Api,
  "tokens",
  Effect.fn(function*(handlers) {
    const tokens = yield* ApiTokens
    return handlers
      .handle("list", ({ query }) =>
        Effect.gen(function*() {
          const principal = yield* CurrentPrincipal
          const listed = yield* tokens.list(principal, query.business_id)
          const now = yield* DateTime.now
          return { business_id: listed.workspaceId, tokens: listed.tokens.map((t) => tokenView(t, now)) }
        }).pipe(mapDomainErrors))
      .handle("create", ({ payload }) =>
        Effect.gen(function*() {
          const created = yield* tokens.create(yield* CurrentPrincipal, payload)
          return CreatedTokenView.make({
            token: tokenView(created, yield* DateTime.now),
            secret: Redacted.value(created.secret)
          })
        }).pipe(mapDomainErrors))
      .handle("revoke", ({ params }) =>
        Effect.gen(function*() {
          const token = yield* tokens.revoke(yield* CurrentPrincipal, params.token_id)
          return { token: tokenView(token, yield* DateTime.now) }
        }).pipe(mapDomainErrors))
      .handle("update", ({ params, payload }) =>
        Effect.gen(function*() {
          const token = yield* tokens.amend(yield* CurrentPrincipal, params.token_id, payload)
          return { token: tokenView(token, yield* DateTime.now) }
        }).pipe(mapDomainErrors))
      .handle("remove", ({ params }) =>
        Effect.gen(function*() {
          yield* tokens.remove(yield* CurrentPrincipal, params.token_id)
          return { id: params.token_id, deleted: true as const }
        }).pipe(mapDomainErrors))
  })
)
