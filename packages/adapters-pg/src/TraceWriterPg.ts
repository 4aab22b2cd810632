import { PgClient } from "@effect/sql-pg"
import { DateTime, Duration, Effect, Layer, Queue, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { TraceWriter } from "@podium/domain/ports/TraceWriter"
import type { Trace } from "@podium/domain/Trace"

/** Most rows in one INSERT: one JSON parameter expanded by jsonb_to_recordset. */
const maxBatch = 1000

/**
 * Group commit: one fiber takes everything queued (up to `maxBatch`) and writes it with a single
 * INSERT. While a write is in flight new traces queue up, so batches grow with load and an idle
 * service writes each trace at once. A failed write is retried with backoff, keeping its batch;
 * closing the layer writes what is queued first.
 */
export const TraceWriterPg = Layer.effect(
  TraceWriter,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient
    const queue = yield* Queue.unbounded<Trace>()
    let queued = 0
    let written = 0

    const insert = (batch: ReadonlyArray<Trace>) =>
      sql`INSERT INTO traces (id, workspace_id, leaderboard_id, leaderboard_model_id, source, run_id, input, messages,
            output, status, error, latency_ms, usage, cost_usd, token_id, created_at)
          SELECT * FROM jsonb_to_recordset(${pg.json(batch.map((t) => ({ ...t, created_at: DateTime.formatIso(t.created_at) })))})
            AS t(id uuid, workspace_id uuid, leaderboard_id uuid, leaderboard_model_id uuid, source text, run_id uuid,
                 input text, messages jsonb, output text, status text, error text, latency_ms double precision,
                 usage jsonb, cost_usd double precision, token_id uuid, created_at timestamptz)
          ON CONFLICT (id) DO NOTHING`.pipe(
        Effect.tapError((error) =>
          Effect.logWarning("trace batch not written; retrying").pipe(
            Effect.annotateLogs({ rows: batch.length, error: error.message })
          )
        ),
        Effect.retry(Schedule.exponential("50 millis").pipe(
          Schedule.modifyDelay(({ attempt }) => Effect.succeed(Duration.millis(Math.min(50 * 2 ** attempt, 5_000))))
        )),
        Effect.orDie
      )

    yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
      const batch = yield* Queue.takeBetween(queue, 1, maxBatch)
      yield* insert(batch)
      written += batch.length
    })))

    const flush = Effect.suspend(() => {
      const target = queued
      return Effect.sleep("2 millis").pipe(Effect.repeat({ until: () => written >= target }), Effect.asVoid)
    })

    yield* Effect.addFinalizer(() => flush.pipe(Effect.timeout("10 seconds"), Effect.ignore))

    return TraceWriter.of({
      record: (trace) =>
        Effect.suspend(() => {
          queued++
          return Queue.offer(queue, trace)
        }).pipe(Effect.asVoid),
      flush
    })
  })
)
