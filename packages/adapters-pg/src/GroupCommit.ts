import { Duration, Effect, Metric, Queue, Schedule, type Scope } from "effect"
import type { SqlError } from "effect/sql"

/**
 * How long the first row of a batch waits for company. Under load batches fill while the previous
 * write is in flight; at low load this keeps a lone request from paying a statement of its own (on
 * a small VM one round trip to Postgres costs more CPU than the rest of a call).
 */
export const linger = Duration.millis(20)

/**
 * Most rows waiting to be written. When the database falls this far behind, `record` waits for
 * room (backpressure on the calls being recorded) instead of letting memory grow without bound.
 */
export const queueCapacity = 10_000

const backoff = Schedule.exponential("50 millis").pipe(
  Schedule.modifyDelay(({ attempt }) => Effect.succeed(Duration.millis(Math.min(50 * 2 ** attempt, 5_000))))
)

/** Postgres's own words ("invalid input syntax for type uuid") rather than the driver's summary. */
export const databaseMessage = (error: SqlError.SqlError): string => {
  const cause = error.reason.cause
  return cause instanceof Error && cause.message !== "" ? cause.message : error.message
}

/** Batch write times, in seconds (retries included), from one fast statement to a database catching up. */
const flushBoundaries = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export interface GroupCommitOptions<A> {
  /** What is written, for log lines ("trace", "inference log"). */
  readonly what: string
  /** Most rows in one write. */
  readonly maxBatch: number
  /** Writes the rows with one statement (all or none of them). */
  readonly write: (batch: ReadonlyArray<A>) => Effect.Effect<unknown, SqlError.SqlError>
  /** Names a row that is set aside, in its log line. */
  readonly describe: (row: A) => Record<string, unknown>
}

/**
 * Group commit off the request path: one fiber takes the first queued row, waits `linger` for more,
 * and writes all it has (up to `maxBatch`) with a single statement. While a write is in flight new
 * rows queue up (at most `queueCapacity`), so batches grow with load; a crash loses at most the
 * rows of one window.
 *
 * A write that fails for a passing reason (connection lost, deadlock) is retried with backoff,
 * keeping its batch. A write that fails because of its data is split in halves until the rows that
 * cannot be stored stand alone; each is set aside with a log line and the rest are written, so one
 * bad row never holds the others. Closing the scope writes what is queued first.
 */
export const groupCommit = <A>(options: GroupCommitOptions<A>): Effect.Effect<{
  readonly record: (row: A) => Effect.Effect<void>
  /** Waits until everything queued so far is written (or set aside). */
  readonly flush: Effect.Effect<void>
}, never, Scope.Scope> =>
  Effect.gen(function*() {
    const queue = yield* Queue.bounded<A>(queueCapacity)
    let queued = 0
    let handled = 0

    // metrics by writer: rows waiting (read when scraped), each batch's write time and rows
    const attributes = { writer: options.what }
    const depth = Metric.registerUnsafe(
      Metric.gauge("podium_group_commit_queue_depth", { description: "Rows recorded and not yet written (or set aside), by writer", attributes }),
      yield* Effect.context<never>(),
      { get: () => ({ value: queued - handled }), update: () => {}, modify: () => {} }
    )
    yield* Effect.addFinalizer(() => Effect.sync(depth.remove))
    const flushSeconds = Metric.histogram("podium_group_commit_flush_seconds", {
      description: "Time to write one batch (retries and splits included), by writer, in seconds",
      boundaries: flushBoundaries,
      attributes
    })
    const rowsWritten = Metric.counter("podium_group_commit_rows_total", {
      description: "Rows taken off the queue and written or set aside, by writer",
      attributes,
      incremental: true
    })

    const writeOnce = (batch: ReadonlyArray<A>) =>
      options.write(batch).pipe(
        Effect.tapError((error) =>
          error.isRetryable
            ? Effect.logWarning(`${options.what} batch not written; retrying`).pipe(
              Effect.annotateLogs({ rows: batch.length, error: error.message })
            )
            : Effect.void
        ),
        Effect.retry({ schedule: backoff, while: (error: SqlError.SqlError) => error.isRetryable })
      )

    const write = (batch: ReadonlyArray<A>): Effect.Effect<void> =>
      writeOnce(batch).pipe(
        Effect.asVoid,
        Effect.catch((error) => {
          if (batch.length > 1) {
            const half = Math.ceil(batch.length / 2)
            return Effect.andThen(write(batch.slice(0, half)), write(batch.slice(half)))
          }
          return Effect.logError(`${options.what} set aside: the database refused it`).pipe(
            Effect.annotateLogs({ ...(batch[0] === undefined ? {} : options.describe(batch[0])), error: databaseMessage(error) })
          )
        })
      )

    yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
      const first = yield* Queue.takeBetween(queue, 1, options.maxBatch)
      const batch = first.length < options.maxBatch
        ? [...first, ...yield* Effect.sleep(linger).pipe(Effect.andThen(Queue.takeBetween(queue, 0, options.maxBatch - first.length)))]
        : first
      const started = performance.now()
      yield* write(batch)
      handled += batch.length
      yield* Metric.update(flushSeconds, (performance.now() - started) / 1000)
      yield* Metric.update(rowsWritten, batch.length)
    })))

    const flush = Effect.suspend(() => {
      const target = queued
      return Effect.sleep("2 millis").pipe(Effect.repeat({ until: () => handled >= target }), Effect.asVoid)
    })

    // runs before the writing fiber is interrupted (finalizers run in reverse order)
    yield* Effect.addFinalizer(() => flush.pipe(Effect.timeout("10 seconds"), Effect.ignore))

    return {
      // a queue with room takes the row at once; a full one is waited on (Queue.offer)
      record: (row: A) =>
        Effect.suspend(() => {
          queued++
          return Queue.offerUnsafe(queue, row) ? Effect.void : Effect.asVoid(Queue.offer(queue, row))
        }),
      flush
    }
  })
