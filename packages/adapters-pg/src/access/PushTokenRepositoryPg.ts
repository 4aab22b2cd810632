import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { WorkspaceId } from "@podium/domain/shared"
import { PushTokenRepository } from "@podium/domain/access"
import { NullableTimestamp, Timestamp, toDate } from "../Rows.ts"

const PushTokenRow = Schema.Struct({
  id: Schema.String,
  workspace_id: WorkspaceId,
  leaderboard_id: Schema.String,
  revoked_at: NullableTimestamp
})

const ListedRow = Schema.Struct({
  ...PushTokenRow.fields,
  name: Schema.String,
  display_prefix: Schema.String,
  created_at: Timestamp,
  last_used_at: NullableTimestamp
})

const layer = Layer.effect(
  PushTokenRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const byHash = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: PushTokenRow,
      execute: (hash) => sql`SELECT id, workspace_id, leaderboard_id, revoked_at FROM push_tokens WHERE secret_hash = ${hash}`
    })
    const list = SqlSchema.findAll({
      Request: Schema.String,
      Result: ListedRow,
      execute: (leaderboardId) =>
        sql`SELECT id, workspace_id, leaderboard_id, revoked_at, name, display_prefix, created_at, last_used_at
            FROM push_tokens WHERE leaderboard_id = ${leaderboardId} ORDER BY created_at DESC, id DESC`
    })
    return PushTokenRepository.of({
      findBySecretHash: (hash) => byHash(hash).pipe(Effect.orDie),
      touch: (id, now) =>
        sql`UPDATE push_tokens SET last_used_at = ${toDate(now)}
            WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${toDate(now)}::timestamptz - '1 minute'::interval)`
          .pipe(Effect.asVoid, Effect.orDie),
      insert: (token, secretHash) =>
        sql`INSERT INTO push_tokens (id, workspace_id, leaderboard_id, name, display_prefix, secret_hash, created_at)
            VALUES (${token.id}, ${token.workspace_id}, ${token.leaderboard_id}, ${token.name}, ${token.display_prefix},
                    ${secretHash}, ${toDate(token.created_at)})`.pipe(Effect.asVoid, Effect.orDie),
      list: (leaderboardId) => list(leaderboardId).pipe(Effect.orDie),
      revokeAll: (leaderboardId, now) =>
        sql`UPDATE push_tokens SET revoked_at = ${toDate(now)} WHERE leaderboard_id = ${leaderboardId} AND revoked_at IS NULL
            RETURNING id`.pipe(Effect.map((rows) => rows.length), Effect.orDie),
      revoke: (leaderboardId, id, now) =>
        sql`UPDATE push_tokens SET revoked_at = COALESCE(revoked_at, ${toDate(now)})
            WHERE id = ${id} AND leaderboard_id = ${leaderboardId} RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        )
    })
  })
)

export const PushTokenRepositoryPg = { layer }
