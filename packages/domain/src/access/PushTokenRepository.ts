import { Context, type DateTime, type Effect, type Option } from "effect"
import type { WorkspaceId } from "../shared/index.ts"

export interface PushTokenRecord {
  readonly id: string
  readonly workspace_id: WorkspaceId
  readonly leaderboard_id: string
  readonly revoked_at: DateTime.Utc | null
}

/** A push token as it is listed: never its secret. */
export interface PushToken extends PushTokenRecord {
  readonly name: string
  readonly display_prefix: string
  readonly created_at: DateTime.Utc
  readonly last_used_at: DateTime.Utc | null
}

/** Push tokens (`hpd_...`): one leaderboard's dataset credential. Only digests are stored. */
export class PushTokenRepository extends Context.Service<PushTokenRepository, {
  readonly findBySecretHash: (hash: string) => Effect.Effect<Option.Option<PushTokenRecord>>
  readonly touch: (id: string, now: DateTime.Utc) => Effect.Effect<void>
  readonly insert: (token: PushToken, secretHash: string) => Effect.Effect<void>
  /** The leaderboard's tokens, newest first, revoked ones included. */
  readonly list: (leaderboardId: string) => Effect.Effect<ReadonlyArray<PushToken>>
  /** Revokes every active token of the leaderboard; how many it revoked. */
  readonly revokeAll: (leaderboardId: string, now: DateTime.Utc) => Effect.Effect<number>
  /**
   * Revokes one token of the leaderboard (revoking again keeps the first time); false when the
   * leaderboard has no token with that id.
   */
  readonly revoke: (leaderboardId: string, id: string, now: DateTime.Utc) => Effect.Effect<boolean>
}>()("@podium/domain/access/PushTokenRepository") {}
