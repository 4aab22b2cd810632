import { Context, type Effect } from "effect"
import type { Trace } from "../Trace.ts"

/**
 * Records traces off the request path. `record` returns once the trace is queued; queued traces
 * are written in batches (group commit) and flushed when the service stops. Only a crash loses
 * what was queued since the last batch (at most one batch window).
 */
export class TraceWriter extends Context.Service<TraceWriter, {
  readonly record: (trace: Trace) => Effect.Effect<void>
  /** Waits until everything queued so far is written. */
  readonly flush: Effect.Effect<void>
}>()("@podium/domain/ports/TraceWriter") {}
