import { DateTime, Effect } from "effect"
import { SqlClient } from "effect/sql"

/** Cluster message ids are snowflakes: milliseconds since 2025-01-01, shifted left by 22 bits. */
const snowflakeEpochMillis = Date.UTC(2025, 0, 1)

/**
 * Deletes processed cluster messages (and their replies) older than `before`. The cluster keeps
 * them for deduplication and never purges them itself, so without this the tables only grow.
 */
export const pruneProcessedMessages = (before: DateTime.Utc) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cutoff = (BigInt(Math.max(0, DateTime.toEpochMillis(before) - snowflakeEpochMillis)) << 22n).toString()
    return yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`DELETE FROM cluster_replies r USING cluster_messages m
                 WHERE r.request_id = m.request_id AND m.processed AND m.id < ${cutoff}::bigint`
      const deleted = yield* sql`DELETE FROM cluster_messages WHERE processed AND id < ${cutoff}::bigint RETURNING id`
      return deleted.length
    }))
  })
