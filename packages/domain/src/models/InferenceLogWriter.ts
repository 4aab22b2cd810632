import { Context, type Effect } from "effect"
import type { InferenceLog } from "./InferenceLog.ts"

/**
 * Records inference logs off the request path, like traces: `record` returns once the log is
 * queued; queued logs are written in batches (group commit) and flushed when the service stops. A
 * log with `deliver` gets its webhook delivery (the durable outbox row) in the same transaction as
 * the log itself, so a log is delivered if and only if it was stored. A log the database refuses is
 * set aside and logged; it never holds the others.
 */
export class InferenceLogWriter extends Context.Service<InferenceLogWriter, {
  readonly record: (log: InferenceLog, delivery: { readonly deliver: boolean }) => Effect.Effect<void>
  /** Waits until everything queued so far is written (or set aside). */
  readonly flush: Effect.Effect<void>
}>()("@podium/domain/models/InferenceLogWriter") {}
