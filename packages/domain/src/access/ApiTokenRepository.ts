import { Context, type DateTime, type Effect, type Option } from "effect"
import type { ApiToken } from "./ApiToken.ts"
import type { TokenId, WorkspaceId } from "../shared/index.ts"

/** API tokens. Only a digest of each secret is stored. */
export class ApiTokenRepository extends Context.Service<ApiTokenRepository, {
  readonly insert: (token: ApiToken, secretHash: string) => Effect.Effect<void>
  readonly findBySecretHash: (hash: string) => Effect.Effect<Option.Option<ApiToken>>
  readonly find: (id: TokenId) => Effect.Effect<Option.Option<ApiToken>>
  readonly list: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<ApiToken>>
  /** Sets revoked_at once; revoking again keeps the first time. */
  readonly revoke: (id: TokenId, now: DateTime.Utc) => Effect.Effect<Option.Option<ApiToken>>
  readonly remove: (id: TokenId) => Effect.Effect<boolean>
  /** Records use (the database also ignores a write within a minute of the last). */
  readonly touch: (id: TokenId, now: DateTime.Utc) => Effect.Effect<void>
}>()("@podium/domain/access/ApiTokenRepository") {}
