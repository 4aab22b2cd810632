import { Layer } from "effect"
import { LeaderboardRepositoryPg } from "../leaderboards/LeaderboardRepositoryPg.ts"
import { ServingHistoryPg } from "../leaderboards/ServingHistoryPg.ts"
import { HumanCaseRepositoryPg } from "./HumanCaseRepositoryPg.ts"
import { HumanDocumentRepositoryPg } from "./HumanDocumentRepositoryPg.ts"

/** The human evaluation context's ports on Postgres. */
export const HumanPg = {
  layer: Layer.mergeAll(
    // records the ranking winner and its serving history in the review's transaction (the same
    // LeaderboardRepositoryPg and ServingHistoryPg instances)
    HumanCaseRepositoryPg.layer.pipe(Layer.provide(Layer.merge(LeaderboardRepositoryPg.layer, ServingHistoryPg.layer))),
    HumanDocumentRepositoryPg.layer
  )
}
