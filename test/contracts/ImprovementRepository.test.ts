import { WorkspaceRepositoryPg } from "@podium/adapters-pg/access/WorkspaceRepositoryPg"
import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { ImprovementRepositoryPg } from "@podium/adapters-pg/runs/ImprovementRepositoryPg"
import { LeaderboardRepositoryPg } from "@podium/adapters-pg/leaderboards/LeaderboardRepositoryPg"
import { layerMigrations } from "@podium/adapters-pg/Migrations"
import { Layer } from "effect"
import { TestDatabase } from "../support/database.ts"
import { improvementRepositoryContract } from "./ImprovementRepository.contract.ts"

// Postgres is the port's only adapter
improvementRepositoryContract("Postgres", () =>
  Layer.mergeAll(
    ImprovementRepositoryPg.layer,
    LeaderboardRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer)),
    WorkspaceRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer))
  ).pipe(
    Layer.provideMerge(layerMigrations),
    Layer.provideMerge(TestDatabase.layer)
  ))
