import { Context, type Effect } from "effect"
import type { Trace } from "./Trace.ts"

/**
 * Records traces off the request path. `record` returns once the trace is queued (it waits for
 * room when the queue is full); queued traces are written in batches (group commit) and flushed
 * when the service stops. Only a crash loses what was queued since the last batch (at most one
 * batch window). A trace the database refuses is set aside and logged; it never holds the others.
 */
export class TraceWriter extends Context.Service<TraceWriter, {
  readonly record: (trace: Trace) => Effect.Effect<void>
  /** Waits until everything queued so far is written (or set aside). */
  readonly flush: Effect.Effect<void>
}>()("@podium/domain/inference/TraceWriter") {}
