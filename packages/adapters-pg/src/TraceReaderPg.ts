import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { TraceReader } from "@podium/domain/ports/TraceReader"
import { Trace } from "@podium/domain/Trace"
import { Timestamp } from "./Rows.ts"

const TraceRow = Schema.Struct({ ...Trace.fields, created_at: Timestamp })
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(TraceRow))

export const TraceReaderPg = Layer.effect(
  TraceReader,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return TraceReader.of({
      batch: (filter, cursor, size) => {
        const conditions = [
          sql`leaderboard_id = ${filter.leaderboardId}`,
          ...(filter.source === undefined ? [] : [sql`source = ${filter.source}`]),
          ...(filter.runId === undefined ? [] : [sql`run_id = ${filter.runId}`]),
          ...("afterId" in cursor ? [sql`id > ${cursor.afterId}`] : [])
        ]
        const skip = "offset" in cursor ? cursor.offset : 0
        return sql`SELECT id::text AS id, workspace_id::text AS workspace_id, leaderboard_id::text AS leaderboard_id,
              leaderboard_model_id::text AS leaderboard_model_id, source, run_id::text AS run_id, input, messages,
              output, status, error, latency_ms, usage, cost_usd, token_id::text AS token_id, created_at
            FROM traces WHERE ${sql.and(conditions)} ORDER BY id LIMIT ${size} OFFSET ${skip}`.pipe(
          Effect.flatMap(decodeRows),
          Effect.orDie
        )
      }
    })
  })
)
