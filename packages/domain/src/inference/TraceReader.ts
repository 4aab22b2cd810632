import { Context, type Effect } from "effect"
import type { Trace, TraceSource } from "./Trace.ts"

export interface TraceFilter {
  readonly leaderboardId: string
  readonly source?: TraceSource | undefined
  readonly runId?: string | undefined
}

/** Where a read starts: after `afterId` (when not null), then skipping `offset` matching rows. */
export interface TracePosition {
  readonly afterId: string | null
  readonly offset: number
}

/** Reads traces in id (creation) order. */
export class TraceReader extends Context.Service<TraceReader, {
  /** Up to `size` traces from `from`: one database round trip. */
  readonly batch: (filter: TraceFilter, from: TracePosition, size: number) => Effect.Effect<ReadonlyArray<Trace>>
  /** The id of the `count`-th trace from `from` when at least one more follows it, else null. */
  readonly pageEnd: (filter: TraceFilter, from: TracePosition, count: number) => Effect.Effect<string | null>
}>()("@podium/domain/inference/TraceReader") {}
