import { Context, type Effect } from "effect"
import type { LeaderboardId } from "../leaderboards/index.ts"
import type { StatsRange, UsagePoint } from "./UsageStats.ts"

/**
 * A leaderboard's inference over time, from its traces of source `inference` (production calls,
 * through the leaderboard or a model traced on it): one point per bucket of the range, in order,
 * buckets without calls as zeros. One aggregate read per series, however many calls it covers.
 */
export class TraceStats extends Context.Service<TraceStats, {
  readonly series: (leaderboardId: LeaderboardId, range: StatsRange) => Effect.Effect<ReadonlyArray<UsagePoint>>
}>()("@podium/domain/inference/TraceStats") {}
