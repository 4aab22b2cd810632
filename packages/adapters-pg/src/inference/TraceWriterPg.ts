import { PgClient } from "@effect/sql-pg"
import { DateTime, Duration, Effect, Layer, Queue, Schedule } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { TraceWriter, type Trace } from "@podium/domain/inference"
import { storableJson } from "@podium/domain/shared"

/** Most rows in one INSERT: one JSON parameter expanded by jsonb_to_recordset. */
const maxBatch = 1000

/**
 * Most traces waiting to be written. When the database falls this far behind, `record` waits for
 * room (backpressure on the calls being traced) instead of letting memory grow without bound.
 */
export const queueCapacity = 10_000

/**
 * How long the first trace of a batch waits for company. Under load batches fill while the
 * previous INSERT is in flight; at low load this keeps a lone request from paying a statement of
 * its own (on a small VM one round trip to Postgres costs more CPU than the rest of a call).
 */
export const linger = Duration.millis(20)

const backoff = Schedule.exponential("50 millis").pipe(
  Schedule.modifyDelay(({ attempt }) => Effect.succeed(Duration.millis(Math.min(50 * 2 ** attempt, 5_000))))
)

/** Postgres's own words ("invalid input syntax for type uuid") rather than the driver's summary. */
const databaseMessage = (error: SqlError.SqlError): string => {
  const cause = error.reason.cause
  return cause instanceof Error && cause.message !== "" ? cause.message : error.message
}

/**
 * Group commit: one fiber takes the first queued trace, waits `linger` for more, and writes all
 * it has (up to `maxBatch`) with a single INSERT. While a write is in flight new traces queue up
 * (at most `queueCapacity`), so batches grow with load. A trace reaches the database within
 * `linger` plus one INSERT of its recording; a crash loses at most that window.
 *
 * A write that fails for a passing reason (connection lost, deadlock) is retried with backoff,
 * keeping its batch. A write that fails because of its data is split in halves until the rows that
 * cannot be stored stand alone; each is set aside with a log line and the rest are written, so one
 * bad trace never holds the others. Strings are stored with U+0000 and lone surrogates replaced.
 * Closing the layer writes what is queued first.
 */
const layer = Layer.effect(
  TraceWriter,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient
    const queue = yield* Queue.bounded<Trace>(queueCapacity)
    let queued = 0
    let handled = 0

    const insertOnce = (batch: ReadonlyArray<Trace>) =>
      sql`INSERT INTO traces (id, workspace_id, leaderboard_id, leaderboard_model_id, source, run_id, input, messages,
            output, status, error, latency_ms, usage, cost_usd, token_id, created_at)
          SELECT * FROM jsonb_to_recordset(${pg.json(batch.map((t) => storableJson({ ...t, created_at: DateTime.formatIso(t.created_at) })))})
            AS t(id uuid, workspace_id uuid, leaderboard_id uuid, leaderboard_model_id uuid, source text, run_id uuid,
                 input text, messages jsonb, output text, status text, error text, latency_ms double precision,
                 usage jsonb, cost_usd double precision, token_id uuid, created_at timestamptz)
          ON CONFLICT (id) DO NOTHING`.pipe(
        Effect.tapError((error) =>
          error.isRetryable
            ? Effect.logWarning("trace batch not written; retrying").pipe(
              Effect.annotateLogs({ rows: batch.length, error: error.message })
            )
            : Effect.void
        ),
        Effect.retry({ schedule: backoff, while: (error: SqlError.SqlError) => error.isRetryable })
      )

    const insert = (batch: ReadonlyArray<Trace>): Effect.Effect<void> =>
      insertOnce(batch).pipe(
        Effect.catch((error) => {
          if (batch.length > 1) {
            const half = Math.ceil(batch.length / 2)
            return Effect.andThen(insert(batch.slice(0, half)), insert(batch.slice(half)))
          }
          return Effect.logError("trace set aside: the database refused it").pipe(
            Effect.annotateLogs({ trace_id: batch[0]?.id, error: databaseMessage(error) })
          )
        })
      )

    yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
      const first = yield* Queue.takeBetween(queue, 1, maxBatch)
      const batch = first.length < maxBatch
        ? [...first, ...yield* Effect.sleep(linger).pipe(Effect.andThen(Queue.takeBetween(queue, 0, maxBatch - first.length)))]
        : first
      yield* insert(batch)
      handled += batch.length
    })))

    const flush = Effect.suspend(() => {
      const target = queued
      return Effect.sleep("2 millis").pipe(Effect.repeat({ until: () => handled >= target }), Effect.asVoid)
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

export const TraceWriterPg = { layer }
