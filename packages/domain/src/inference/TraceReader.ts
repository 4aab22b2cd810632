import { Context, type Effect, type Scope, type Stream } from "effect"
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
  /**
   * Up to `limit` traces from `from` as export lines, in chunks of at most `chunkLines` lines: each
   * `exportedTrace` as JSON and a newline, UTF-8 (the JSON may differ from JSON.stringify's in
   * spacing and number notation, not in value), and where the next page starts (`pageEnd` of the
   * same page). One statement, streamed: it starts in `Scope`, which must stay open until the
   * chunks are read, and a few chunks are held at a time.
   */
  readonly lines: (
    filter: TraceFilter,
    from: TracePosition,
    limit: number,
    chunkLines: number
  ) => Effect.Effect<{ readonly nextCursor: string | null; readonly chunks: Stream.Stream<Uint8Array> }, never, Scope.Scope>
  /** The id of the `count`-th trace from `from` when at least one more follows it, else null. */
  readonly pageEnd: (filter: TraceFilter, from: TracePosition, count: number) => Effect.Effect<string | null>
}>()("@podium/domain/inference/TraceReader") {}
