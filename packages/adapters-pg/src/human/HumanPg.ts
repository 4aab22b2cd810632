import { Layer } from "effect"
import { LeaderboardRepositoryPg } from "../leaderboards/LeaderboardRepositoryPg.ts"
import { HumanCaseRepositoryPg } from "./HumanCaseRepositoryPg.ts"
import { HumanDocumentRepositoryPg } from "./HumanDocumentRepositoryPg.ts"

/** The human evaluation context's ports on Postgres. */
export const HumanPg = {
  layer: Layer.mergeAll(
    // records the ranking winner in the review's transaction (the same LeaderboardRepositoryPg instance)
    HumanCaseRepositoryPg.layer.pipe(Layer.provide(LeaderboardRepositoryPg.layer)),
    HumanDocumentRepositoryPg.layer
  )
}
