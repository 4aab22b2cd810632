import { Effect } from "effect"

/**
 * Stores a job, then enqueues it, without an interruption between: a job is stored before its
 * enqueueing is tried, and should enqueueing fail, it stays stored (queued) for the scheduler's
 * tick to enqueue again. The store's failure (a job already under way, say) is the caller's.
 */
export const storeThenEnqueue = <E>(
  store: Effect.Effect<void, E>,
  enqueue: Effect.Effect<void>,
  job: { readonly kind: string; readonly id: string }
): Effect.Effect<void, E> =>
  Effect.uninterruptible(Effect.andThen(
    store,
    enqueue.pipe(
      Effect.catchCause((cause) =>
        Effect.logError(`${job.kind} not enqueued: the scheduler will`, cause).pipe(Effect.annotateLogs({ id: job.id }))
      )
    )
  ))
