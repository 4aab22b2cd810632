import { type BigDecimal, Context, type DateTime, type Effect, type Option, type Result } from "effect"
import type { AmendedToken, ApiToken } from "./ApiToken.ts"
import type { TokenId, WorkspaceId } from "../shared/index.ts"

/** What a token has spent in one budget window, in exact decimal USD (the BudgetLedger's books). */
export interface WindowSpend {
  /** Calls that completed, at their cost. */
  readonly settled: BigDecimal.BigDecimal
  /** Held for calls in flight, at their bound. */
  readonly reserved: BigDecimal.BigDecimal
}

/** API tokens. Only a digest of each secret is stored. */
export class ApiTokenRepository extends Context.Service<ApiTokenRepository, {
  readonly insert: (token: ApiToken, secretHash: string) => Effect.Effect<void>
  readonly findBySecretHash: (hash: string) => Effect.Effect<Option.Option<ApiToken>>
  readonly find: (id: TokenId) => Effect.Effect<Option.Option<ApiToken>>
  readonly list: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<ApiToken>>
  /** Sets revoked_at once; revoking again keeps the first time. */
  readonly revoke: (id: TokenId, now: DateTime.Utc) => Effect.Effect<Option.Option<ApiToken>>
  readonly remove: (id: TokenId) => Effect.Effect<boolean>
  /**
   * Changes a token with `change` of its current row, read under a row lock so two changes at once
   * both land; when the change moves the budget window, the spend and reservations of the old
   * window move to the new one in the same transaction (what the new window held before is
   * dropped). None for an unknown token; `change`'s failure is returned and nothing is written.
   */
  readonly amend: <E>(
    id: TokenId,
    change: (current: ApiToken) => Result.Result<AmendedToken, E>
  ) => Effect.Effect<Option.Option<ApiToken>, E>
  /** Each token's spend in the window starting at `windowStart` (zero where nothing was spent), in order. */
  readonly spend: (
    windows: ReadonlyArray<{ readonly tokenId: TokenId; readonly windowStart: DateTime.Utc }>
  ) => Effect.Effect<ReadonlyArray<WindowSpend>>
  /** Records use (the database also ignores a write within a minute of the last). */
  readonly touch: (id: TokenId, now: DateTime.Utc) => Effect.Effect<void>
}>()("@podium/domain/access/ApiTokenRepository") {}
