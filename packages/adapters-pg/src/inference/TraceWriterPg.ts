import { DateTime, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TraceWriter, type Trace } from "@podium/domain/inference"
import { storableJsonText } from "@podium/domain/shared"
import { groupCommit } from "../GroupCommit.ts"

export { linger, queueCapacity } from "../GroupCommit.ts"

/** Most rows in one INSERT: one JSON parameter expanded by jsonb_to_recordset. */
const maxBatch = 1000

/**
 * Traces are written by group commit (GroupCommit.ts): a trace reaches the database within
 * `linger` plus one INSERT of its recording, a write that fails for a passing reason is retried,
 * and a trace the database refuses is set aside without holding the others. Strings are stored
 * with U+0000 and lone surrogates replaced. Closing the layer writes what is queued first.
 */
const layer = Layer.effect(
  TraceWriter,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const writer = yield* groupCommit<Trace>({
      what: "trace",
      maxBatch,
      describe: (t) => ({ trace_id: t.id }),
      write: (batch) =>
        sql`INSERT INTO traces (id, workspace_id, leaderboard_id, leaderboard_model_id, source, run_id, input, messages,
              output, status, error, latency_ms, usage, cost_usd, token_id, created_at)
            SELECT * FROM jsonb_to_recordset(${storableJsonText(batch.map((t) => ({ ...t, created_at: DateTime.formatIso(t.created_at) })))}::jsonb)
              AS t(id uuid, workspace_id uuid, leaderboard_id uuid, leaderboard_model_id uuid, source text, run_id uuid,
                   input text, messages jsonb, output text, status text, error text, latency_ms double precision,
                   usage jsonb, cost_usd double precision, token_id uuid, created_at timestamptz)
            ON CONFLICT (id) DO NOTHING`
    })
    return TraceWriter.of(writer)
  })
)

export const TraceWriterPg = { layer }
