import { Context, Effect, Layer, Option, type Scope, Stream } from "effect"
import type { NotFound } from "../shared/index.ts"
import { type LeaderboardId, Leaderboards } from "../leaderboards/index.ts"
import type { Principal } from "../access/index.ts"
import { type TraceFilter, type TracePosition, TraceReader } from "./TraceReader.ts"
import type { Trace, TraceSource } from "./Trace.ts"

export interface ExportQuery {
  /** Most rows one request returns. */
  readonly limit: number
  /** Matching rows to skip (after `cursor`, when given). */
  readonly offset: number
  /** Rows fetched per database round trip. */
  readonly batchLimit: number
  /** Start after this trace id: the `next_cursor` of the previous page. */
  readonly cursor?: string | undefined
  readonly source?: TraceSource | undefined
  readonly runId?: string | undefined
}

/** A page as JSON lines, read by one statement, in chunks of at most `batchLimit` lines. */
export interface ExportLines {
  readonly chunks: Stream.Stream<Uint8Array>
  readonly nextCursor: string | null
}

export interface ExportPage {
  /** The page's rows, one database round trip per element; lazy, one batch held at a time. */
  readonly batches: Stream.Stream<ReadonlyArray<Trace>>
  /** Where the next page starts (the id of this page's last row), or null when this page ends the export. */
  readonly nextCursor: string | null
}

/** What a page reads, and from where. */
const readOf = (leaderboardId: LeaderboardId, query: ExportQuery): { filter: TraceFilter; start: TracePosition } => ({
  filter: { leaderboardId, source: query.source, runId: query.runId },
  start: { afterId: query.cursor ?? null, offset: query.offset }
})

/**
 * Trace export: matching traces in creation (id) order, a page of at most `limit` rows after
 * `cursor` and `offset`, fetched `batchLimit` rows per round trip. A cursor is an index seek, so a
 * full export page by page costs the same per page however deep it goes; `offset` is kept for
 * clients that page by count.
 */
export class TraceExport extends Context.Service<TraceExport, {
  readonly page: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    query: ExportQuery
  ) => Effect.Effect<ExportPage, NotFound>
  /**
   * The same page as export lines (see TraceReader.lines), for the JSONL formats: its statement
   * starts in `Scope`, which must stay open until the chunks are read (a request's scope does).
   */
  readonly lines: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    query: ExportQuery
  ) => Effect.Effect<ExportLines, NotFound, Scope.Scope>
}>()("@podium/domain/inference/TraceExport") {
  static readonly layer = Layer.effect(
    TraceExport,
    Effect.gen(function*() {
      const leaderboards = yield* Leaderboards
      const reader = yield* TraceReader

      const page = Effect.fn("TraceExport.page")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        query: ExportQuery
      ) {
        yield* leaderboards.get(principal, leaderboardId)
        const { filter, start } = readOf(leaderboardId, query)
        // the id the page ends on, when another row follows it
        const nextCursor = yield* reader.pageEnd(filter, start, query.limit)
        const batches = Stream.paginate(
          { cursor: start, read: 0 },
          ({ cursor, read }) =>
            Effect.map(reader.batch(filter, cursor, Math.min(query.batchLimit, query.limit - read)), (rows) => {
              const last = rows.at(-1)
              const total = read + rows.length
              const more = last !== undefined && total < query.limit && rows.length === Math.min(query.batchLimit, query.limit - read)
              return [
                [rows],
                more ? Option.some({ cursor: { afterId: last.id, offset: 0 }, read: total }) : Option.none()
              ] as const
            })
        ).pipe(Stream.filter((rows) => rows.length > 0))
        return { batches, nextCursor }
      })

      const lines = Effect.fn("TraceExport.lines")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        query: ExportQuery
      ) {
        // the access check reads the instance's copy of the leaderboard: no round trip before the page's
        yield* leaderboards.serving(principal, leaderboardId)
        const { filter, start } = readOf(leaderboardId, query)
        return yield* reader.lines(filter, start, query.limit, query.batchLimit)
      })

      return TraceExport.of({ page, lines })
    })
  )
}
