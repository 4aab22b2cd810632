import { Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { WorkspaceId } from "@podium/domain/shared"
import { PushTokenRepository } from "@podium/domain/access"
import { NullableTimestamp, toDate } from "../Rows.ts"

const PushTokenRow = Schema.Struct({
  id: Schema.String,
  workspace_id: WorkspaceId,
  leaderboard_id: Schema.String,
  revoked_at: NullableTimestamp
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
    return PushTokenRepository.of({
      findBySecretHash: (hash) => byHash(hash).pipe(Effect.orDie),
      touch: (id, now) =>
        sql`UPDATE push_tokens SET last_used_at = ${toDate(now)}
            WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${toDate(now)}::timestamptz - '1 minute'::interval)`
          .pipe(Effect.asVoid, Effect.orDie)
    })
  })
)

export const PushTokenRepositoryPg = { layer }
