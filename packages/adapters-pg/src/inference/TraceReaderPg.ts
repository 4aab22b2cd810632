import { Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { TraceReader, type TraceFilter, type TracePosition, Trace } from "@podium/domain/inference"
import { Timestamp } from "../Rows.ts"

const TraceRow = Schema.Struct({ ...Trace.fields, created_at: Timestamp })
const decodeRows = Schema.decodeUnknownEffect(Schema.Array(TraceRow))

const layer = Layer.effect(
  TraceReader,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // (leaderboard_id, id) is indexed: a cursor is a seek, an offset a walk of the index
    const where = (filter: TraceFilter, from: TracePosition) =>
      sql.and([
        sql`leaderboard_id = ${filter.leaderboardId}`,
        ...(filter.source === undefined ? [] : [sql`source = ${filter.source}`]),
        ...(filter.runId === undefined ? [] : [sql`run_id = ${filter.runId}`]),
        ...(from.afterId === null ? [] : [sql`id > ${from.afterId}`])
      ])
    return TraceReader.of({
      batch: (filter, from, size) =>
        sql`SELECT id::text AS id, workspace_id::text AS workspace_id, leaderboard_id::text AS leaderboard_id,
              leaderboard_model_id::text AS leaderboard_model_id, source, run_id::text AS run_id, input, messages,
              output, status, error, latency_ms, usage, cost_usd, token_id::text AS token_id, created_at
            FROM traces WHERE ${where(filter, from)} ORDER BY id LIMIT ${size} OFFSET ${from.offset}`.pipe(
          Effect.flatMap(decodeRows),
          Effect.orDie
        ),
      pageEnd: (filter, from, count) =>
        sql<{ id: string }>`SELECT id::text AS id FROM traces WHERE ${where(filter, from)}
            ORDER BY id LIMIT 2 OFFSET ${from.offset + count - 1}`.pipe(
          Effect.map((rows) => rows.length === 2 ? rows[0]!.id : null),
          Effect.orDie
        )
    })
  })
)

export const TraceReaderPg = { layer }
