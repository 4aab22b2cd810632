import { WorkspaceRepositoryPg } from "@podium/adapters-pg/access/WorkspaceRepositoryPg"
import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { DatasetLabelRepositoryPg } from "@podium/adapters-pg/datasets/DatasetLabelRepositoryPg"
import { LeaderboardRepositoryPg } from "@podium/adapters-pg/leaderboards/LeaderboardRepositoryPg"
import { layerMigrations } from "@podium/adapters-pg/Migrations"
import { Layer } from "effect"
import { TestDatabase } from "../support/database.ts"
import { datasetLabelRepositoryContract } from "./DatasetLabelRepository.contract.ts"

// Postgres is the port's only adapter
datasetLabelRepositoryContract("Postgres", () =>
  Layer.mergeAll(
    DatasetLabelRepositoryPg.layer,
    LeaderboardRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer)),
    WorkspaceRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer))
  ).pipe(
    Layer.provideMerge(layerMigrations),
    Layer.provideMerge(TestDatabase.layer)
  ))
