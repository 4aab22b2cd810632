import { Context, DateTime, Effect, Layer } from "effect"
import type { Principal } from "../access/index.ts"
import { type LeaderboardId, Leaderboards } from "../leaderboards/index.ts"
import type { InvalidInput, NotFound } from "../shared/index.ts"
import { TraceStats } from "./TraceStats.ts"
import { defaultStatsWindow, type StatsAsk, statsRange, type UsageSeries } from "./UsageStats.ts"

/** A leaderboard's dashboard: its inference calls, errors, spend and latency over a window, for those who can see it. */
export class LeaderboardStats extends Context.Service<LeaderboardStats, {
  /** The window (default 24h) in its bucket size (the window's default when not asked); see `statsRange`. */
  readonly series: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    ask: StatsAsk
  ) => Effect.Effect<UsageSeries, NotFound | InvalidInput>
}>()("@podium/domain/inference/LeaderboardStats") {
  static readonly layer = Layer.effect(
    LeaderboardStats,
    Effect.gen(function*() {
      const leaderboards = yield* Leaderboards
      const stats = yield* TraceStats
      return LeaderboardStats.of({
        series: Effect.fn("LeaderboardStats.series")(function*(principal, leaderboardId, ask) {
          yield* leaderboards.get(principal, leaderboardId)
          const range = yield* Effect.fromResult(statsRange(ask.window ?? defaultStatsWindow, ask.bucket, yield* DateTime.now))
          return { range, points: yield* stats.series(leaderboardId, range) }
        })
      })
    })
  )
}
