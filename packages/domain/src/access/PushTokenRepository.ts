import { Context, type DateTime, type Effect, type Option } from "effect"
import type { WorkspaceId } from "../shared/index.ts"

export interface PushTokenRecord {
  readonly id: string
  readonly workspace_id: WorkspaceId
  readonly leaderboard_id: string
  readonly revoked_at: DateTime.Utc | null
}

/** Push tokens (`hpd_...`): one leaderboard's dataset credential. Only digests are stored. */
export class PushTokenRepository extends Context.Service<PushTokenRepository, {
  readonly findBySecretHash: (hash: string) => Effect.Effect<Option.Option<PushTokenRecord>>
  readonly touch: (id: string, now: DateTime.Utc) => Effect.Effect<void>
}>()("@podium/domain/access/PushTokenRepository") {}
