import { LeaderboardRepositoryPg } from "./LeaderboardRepositoryPg.ts"

/** The leaderboards context's ports on Postgres. */
export const LeaderboardsPg = {
  layer: LeaderboardRepositoryPg.layer
}
