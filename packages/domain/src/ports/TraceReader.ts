import { Context, type Effect } from "effect"
import type { Trace, TraceSource } from "../Trace.ts"

export interface TraceFilter {
  readonly leaderboardId: string
  readonly source?: TraceSource | undefined
  readonly runId?: string | undefined
}

/** Reads traces in id (creation) order, one batch per call: after `afterId`, or skipping `offset`. */
export class TraceReader extends Context.Service<TraceReader, {
  readonly batch: (
    filter: TraceFilter,
    cursor: { readonly afterId: string } | { readonly offset: number },
    size: number
  ) => Effect.Effect<ReadonlyArray<Trace>>
}>()("@podium/domain/ports/TraceReader") {}
