import { Context, Effect, Layer, Option, Stream } from "effect"
import type { NotFound } from "../CommonErrors.ts"
import type { LeaderboardId } from "../Leaderboard.ts"
import type { Principal } from "../Principal.ts"
import { TraceReader } from "../ports/TraceReader.ts"
import type { Trace, TraceSource } from "../Trace.ts"
import { Leaderboards } from "./Leaderboards.ts"

export interface ExportQuery {
  /** Rows per batch (one database query each). */
  readonly limit: number
  /** Matching rows to skip before the first batch. */
  readonly offset: number
  /** Most batches one request reads. */
  readonly batchLimit: number
  readonly source?: TraceSource | undefined
  readonly runId?: string | undefined
}

/**
 * Trace export: matching traces in creation order, read in batches of `limit` rows, at most
 * `batchLimit` batches per request. The stream is lazy and holds one batch at a time, so an export
 * of any size runs in constant memory.
 */
export class TraceExport extends Context.Service<TraceExport, {
  readonly batches: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    query: ExportQuery
  ) => Effect.Effect<Stream.Stream<ReadonlyArray<Trace>>, NotFound>
}>()("@podium/domain/services/TraceExport") {
  static readonly layer = Layer.effect(
    TraceExport,
    Effect.gen(function*() {
      const leaderboards = yield* Leaderboards
      const reader = yield* TraceReader

      const batches = Effect.fn("TraceExport.batches")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        query: ExportQuery
      ) {
        yield* leaderboards.get(principal, leaderboardId)
        const filter = { leaderboardId, source: query.source, runId: query.runId }
        type Cursor = { readonly afterId: string } | { readonly offset: number }
        return Stream.paginate(
          { cursor: { offset: query.offset } as Cursor, read: 0 },
          ({ cursor, read }) =>
            Effect.map(reader.batch(filter, cursor, query.limit), (rows) => {
              const last = rows.at(-1)
              const more = rows.length === query.limit && read + 1 < query.batchLimit && last !== undefined
              return [
                [rows],
                more ? Option.some({ cursor: { afterId: last.id } as Cursor, read: read + 1 }) : Option.none()
              ] as const
            })
        ).pipe(Stream.filter((rows) => rows.length > 0))
      })

      return TraceExport.of({ batches })
    })
  )
}
