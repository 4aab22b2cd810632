import { PgClient } from "@effect/sql-pg"
import { DateTime, Duration, Effect, Layer, Queue, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { TraceWriter } from "@podium/domain/ports/TraceWriter"
import type { Trace } from "@podium/domain/Trace"

/** Most rows in one INSERT: one JSON parameter expanded by jsonb_to_recordset. */
const maxBatch = 1000

/**
 * How long the first trace of a batch waits for company. Under load batches fill while the
 * previous INSERT is in flight; at low load this keeps a lone request from paying a statement of
 * its own (on a small VM one round trip to Postgres costs more CPU than the rest of a call).
 */
export const linger = Duration.millis(20)

/**
 * Group commit: one fiber takes the first queued trace, waits `linger` for more, and writes all
 * it has (up to `maxBatch`) with a single INSERT. While a write is in flight new traces queue up,
 * so batches grow with load. A trace reaches the database within `linger` plus one INSERT of its
 * recording; a crash loses at most that window. A failed write is retried with backoff, keeping
 * its batch; closing the layer writes what is queued first.
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
      const first = yield* Queue.takeBetween(queue, 1, maxBatch)
      const batch = first.length < maxBatch
        ? [...first, ...yield* Effect.sleep(linger).pipe(Effect.andThen(Queue.takeBetween(queue, 0, maxBatch - first.length)))]
        : first
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
