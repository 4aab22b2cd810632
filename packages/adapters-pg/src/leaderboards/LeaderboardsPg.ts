import { Layer } from "effect"
import { LeaderboardRepositoryPg } from "./LeaderboardRepositoryPg.ts"
import { ServingHistoryPg } from "./ServingHistoryPg.ts"

/** The leaderboards context's ports on Postgres. */
export const LeaderboardsPg = {
  layer: Layer.merge(LeaderboardRepositoryPg.layer, ServingHistoryPg.layer)
}
