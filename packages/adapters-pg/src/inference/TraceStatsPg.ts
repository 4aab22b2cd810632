import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TraceStats } from "@podium/domain/inference"
import { usageSeries } from "../UsageSeries.ts"

/** A leaderboard's series from the traces' rollups (kept by a trigger on traces, migration 0031). */
const layer = Layer.effect(
  TraceStats,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return TraceStats.of({
      series: Effect.fn("TraceStats.series")(function*(leaderboardId, range) {
        return yield* usageSeries(sql, { table: "trace_usage", key: "leaderboard_id" }, leaderboardId, range)
      })
    })
  })
)

export const TraceStatsPg = { layer }
