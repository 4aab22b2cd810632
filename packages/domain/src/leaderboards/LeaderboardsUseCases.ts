import { Leaderboards } from "./Leaderboards.ts"

/**
 * The leaderboards context wired: its use case over its ports (leaderboards, and the ModelDirectory
 * the models context answers). Most other contexts build on it.
 */
export const LeaderboardsUseCases = {
  layer: Leaderboards.layer
}
