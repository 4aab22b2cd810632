import { PgClient } from "@effect/sql-pg"
import { DateTime, Duration, Effect, Layer, Queue, Schedule } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { type InferenceLog, InferenceLogWriter, type WebhookDelivery } from "@podium/domain/models"
import { storableJson } from "@podium/domain/shared"

/** Most rows in one statement: one JSON parameter expanded by jsonb_to_recordset. */
const maxBatch = 500

/**
 * Most logs waiting to be written. When the database falls this far behind, `record` waits for
 * room (backpressure on the inferences being logged) instead of letting memory grow without bound.
 */
export const queueCapacity = 10_000

/** How long the first log of a batch waits for company (see TraceWriterPg). */
export const linger = Duration.millis(20)

const backoff = Schedule.exponential("50 millis").pipe(
  Schedule.modifyDelay(({ attempt }) => Effect.succeed(Duration.millis(Math.min(50 * 2 ** attempt, 5_000))))
)

/** What a log to be delivered carries in `metadata.webhook_delivery` until its first attempt. */
const pending: WebhookDelivery = { status: "pending", attempts: 0, last_status_code: null, last_error: null, delivered_at: null }

interface Queued {
  readonly log: InferenceLog
  readonly deliver: boolean
}

/** Postgres's own words ("invalid input syntax for type uuid") rather than the driver's summary. */
const databaseMessage = (error: SqlError.SqlError): string => {
  const cause = error.reason.cause
  return cause instanceof Error && cause.message !== "" ? cause.message : error.message
}

/** One row of the batch's JSON: every string in it made storable. */
const rowOf = ({ deliver, log }: Queued) =>
  storableJson({
    id: log.id,
    model_id: log.model_id,
    workspace_id: log.workspace_id,
    version_id: log.version_id,
    timestamp: DateTime.formatIso(log.timestamp),
    input_message: log.input_message,
    output_messages: log.output_messages,
    traces: log.traces,
    metadata: deliver ? { ...log.metadata, webhook_delivery: pending } : log.metadata,
    created_at: DateTime.formatIso(log.created_at),
    deliver
  })

/**
 * Group commit, as TraceWriterPg: one fiber takes the first queued log, waits `linger` for more, and
 * writes all it has (up to `maxBatch`) with one statement, which inserts the logs and, for those to
 * be delivered, their outbox rows (due at the log's creation): both or neither. A log already stored
 * (a retried batch whose commit went through) is skipped with its outbox row.
 *
 * A write that fails for a passing reason is retried with backoff, keeping its batch. A write that
 * fails because of its data (a model that is gone, an id that is no uuid) is split in halves until the
 * rows that cannot be stored stand alone; each is set aside with a log line and the rest are written.
 * Strings are stored with U+0000 and lone surrogates replaced. Closing the layer writes what is queued
 * first.
 */
const layer = Layer.effect(
  InferenceLogWriter,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient
    const queue = yield* Queue.bounded<Queued>(queueCapacity)
    let queued = 0
    let handled = 0

    const insertOnce = (batch: ReadonlyArray<Queued>) =>
      sql`
        WITH batch AS (
          SELECT * FROM jsonb_to_recordset(${pg.json(batch.map(rowOf))})
            AS t(id uuid, model_id uuid, workspace_id uuid, version_id uuid, "timestamp" timestamptz, input_message jsonb,
                 output_messages jsonb, traces jsonb, metadata jsonb, created_at timestamptz, deliver boolean)
        ), stored AS (
          INSERT INTO model_inference_logs (id, model_id, workspace_id, version_id, "timestamp", input_message,
            output_messages, traces, metadata, created_at)
          SELECT id, model_id, workspace_id, version_id, "timestamp", input_message, output_messages, traces, metadata,
            created_at
          FROM batch
          ON CONFLICT (id) DO NOTHING
          RETURNING id
        )
        INSERT INTO webhook_outbox (log_id, model_id, attempts, next_attempt_at)
        SELECT b.id, b.model_id, 0, b.created_at FROM batch b JOIN stored s ON s.id = b.id WHERE b.deliver
        ON CONFLICT (log_id) DO NOTHING`.pipe(
        Effect.tapError((error) =>
          error.isRetryable
            ? Effect.logWarning("inference log batch not written; retrying").pipe(
              Effect.annotateLogs({ rows: batch.length, error: error.message })
            )
            : Effect.void
        ),
        Effect.retry({ schedule: backoff, while: (error: SqlError.SqlError) => error.isRetryable })
      )

    const insert = (batch: ReadonlyArray<Queued>): Effect.Effect<void> =>
      insertOnce(batch).pipe(
        Effect.catch((error) => {
          if (batch.length > 1) {
            const half = Math.ceil(batch.length / 2)
            return Effect.andThen(insert(batch.slice(0, half)), insert(batch.slice(half)))
          }
          return Effect.logError("inference log set aside: the database refused it").pipe(
            Effect.annotateLogs({ log_id: batch[0]?.log.id, model_id: batch[0]?.log.model_id, error: databaseMessage(error) })
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

    // runs before the writing fiber is interrupted (finalizers run in reverse order)
    yield* Effect.addFinalizer(() => flush.pipe(Effect.timeout("10 seconds"), Effect.ignore))

    return InferenceLogWriter.of({
      record: (log, { deliver }) =>
        Effect.suspend(() => {
          queued++
          return Queue.offer(queue, { log, deliver })
        }).pipe(Effect.asVoid),
      flush
    })
  })
)

export const InferenceLogWriterPg = { layer }
