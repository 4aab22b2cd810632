import { WorkspaceRepositoryPg } from "@podium/adapters-pg/access/WorkspaceRepositoryPg"
import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { DatasetRepositoryPg } from "@podium/adapters-pg/datasets/DatasetRepositoryPg"
import { LeaderboardRepositoryPg } from "@podium/adapters-pg/leaderboards/LeaderboardRepositoryPg"
import { layerMigrations } from "@podium/adapters-pg/Migrations"
import { WorkspaceRepositoryMemory } from "@podium/domain/access/memory"
import { DatasetRepositoryMemory } from "@podium/domain/datasets/memory"
import { LeaderboardRepositoryMemory } from "@podium/domain/leaderboards/memory"
import { Layer } from "effect"
import { TestDatabase } from "../support/database.ts"
import { datasetRepositoryContract } from "./DatasetRepository.contract.ts"

datasetRepositoryContract("memory", () =>
  Layer.mergeAll(DatasetRepositoryMemory.layer, LeaderboardRepositoryMemory.layer, WorkspaceRepositoryMemory.layer))

datasetRepositoryContract("Postgres", () =>
  Layer.mergeAll(
    DatasetRepositoryPg.layer,
    LeaderboardRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer)),
    WorkspaceRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer))
  ).pipe(
    Layer.provideMerge(layerMigrations),
    Layer.provideMerge(TestDatabase.layer)
  ))
