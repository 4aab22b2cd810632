import { WorkspaceRepositoryPg } from "@podium/adapters-pg/access/WorkspaceRepositoryPg"
import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { LeaderboardRepositoryPg } from "@podium/adapters-pg/leaderboards/LeaderboardRepositoryPg"
import { layerMigrations } from "@podium/adapters-pg/Migrations"
import { DeploymentHistoryPg } from "@podium/adapters-pg/models/DeploymentHistoryPg"
import { FineTuneRepositoryPg } from "@podium/adapters-pg/models/FineTuneRepositoryPg"
import { ModelRepositoryPg } from "@podium/adapters-pg/models/ModelRepositoryPg"
import { WorkspaceRepositoryMemory } from "@podium/domain/access/memory"
import { LeaderboardRepositoryMemory } from "@podium/domain/leaderboards/memory"
import { DeploymentHistoryMemory, FineTuneRepositoryMemory, ModelRepositoryMemory } from "@podium/domain/models/memory"
import { Layer } from "effect"
import { TestDatabase } from "../support/database.ts"
import { deploymentHistoryContract, deploymentHistoryPostgresContract } from "./DeploymentHistory.contract.ts"

deploymentHistoryContract("memory", () =>
  Layer.mergeAll(
    DeploymentHistoryMemory.layer,
    ModelRepositoryMemory.layer.pipe(Layer.provide(Layer.merge(FineTuneRepositoryMemory.layer, LeaderboardRepositoryMemory.layer))),
    WorkspaceRepositoryMemory.layer
  ))

const postgres = () =>
  Layer.mergeAll(
    DeploymentHistoryPg.layer,
    ModelRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer)),
    FineTuneRepositoryPg.layer,
    LeaderboardRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer)),
    WorkspaceRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer))
  ).pipe(
    Layer.provideMerge(layerMigrations),
    Layer.provideMerge(TestDatabase.layer)
  )

deploymentHistoryContract("Postgres", postgres)
deploymentHistoryPostgresContract(postgres)
