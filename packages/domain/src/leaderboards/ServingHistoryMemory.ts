import { Data, DateTime, Effect, Layer, Ref } from "effect"
import { ServingHistory, type ServingHistoryEntry } from "./ServingHistory.ts"

/** What the Postgres primary key refuses: a defect there, so one here. */
class ConstraintViolated extends Data.Error<{ readonly constraint: string }> {}

/** Newest first: by time, then by id, as the Postgres index orders them. */
const newestFirst = (a: ServingHistoryEntry, b: ServingHistoryEntry) =>
  DateTime.isGreaterThan(a.at, b.at) ? -1
  : DateTime.isLessThan(a.at, b.at) ? 1
  : a.id > b.id ? -1
  : a.id < b.id ? 1
  : 0

/**
 * The Postgres adapter's semantics over an in-process list, for tests. It does not know the
 * leaderboards, so it cannot refuse an entry of a leaderboard never stored as Postgres does.
 */
const layer = Layer.effect(
  ServingHistory,
  Effect.gen(function*() {
    const ref = yield* Ref.make<ReadonlyArray<ServingHistoryEntry>>([])
    return ServingHistory.of({
      append: (entry) =>
        Effect.andThen(
          Effect.yieldNow,
          Ref.modify(ref, (entries) =>
            entries.some((e) => e.id === entry.id)
              ? [new ConstraintViolated({ constraint: "leaderboard_serving_history_pkey" }), entries]
              : [undefined, [...entries, entry]])
        ).pipe(Effect.flatMap((out) => out === undefined ? Effect.void : Effect.die(out))),
      list: (leaderboardId, page) =>
        Effect.andThen(
          Effect.yieldNow,
          Effect.map(Ref.get(ref), (all) => {
            const entries = all.filter((e) => e.leaderboard_id === leaderboardId).sort(newestFirst)
            const start = page.cursor === undefined ? 0 : entries.findIndex((e) => e.id === page.cursor) + 1
            // a cursor naming no entry of this leaderboard: an empty page, as the index seek finds nothing
            const rest = page.cursor !== undefined && start === 0 ? [] : entries.slice(start)
            const taken = rest.slice(0, page.limit)
            return {
              entries: taken,
              next_cursor: rest.length > page.limit ? taken[taken.length - 1]!.id : null
            }
          })
        )
    })
  })
)

export const ServingHistoryMemory = { layer }
