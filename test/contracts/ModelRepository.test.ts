import { WorkspaceRepositoryPg } from "@podium/adapters-pg/access/WorkspaceRepositoryPg"
import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { LeaderboardRepositoryPg } from "@podium/adapters-pg/leaderboards/LeaderboardRepositoryPg"
import { layerMigrations } from "@podium/adapters-pg/Migrations"
import { FineTuneRepositoryPg } from "@podium/adapters-pg/models/FineTuneRepositoryPg"
import { ModelRepositoryPg } from "@podium/adapters-pg/models/ModelRepositoryPg"
import { RunRepositoryPg } from "@podium/adapters-pg/runs/RunRepositoryPg"
import { WorkspaceRepositoryMemory } from "@podium/domain/access/memory"
import { LeaderboardRepositoryMemory } from "@podium/domain/leaderboards/memory"
import { FineTuneRepositoryMemory, ModelRepositoryMemory } from "@podium/domain/models/memory"
import { Layer } from "effect"
import { TestDatabase } from "../support/database.ts"
import { modelRepositoryContract, modelRepositoryPostgresContract } from "./ModelRepository.contract.ts"

modelRepositoryContract("memory", () =>
  ModelRepositoryMemory.layer.pipe(
    Layer.provideMerge(Layer.merge(FineTuneRepositoryMemory.layer, LeaderboardRepositoryMemory.layer)),
    Layer.merge(WorkspaceRepositoryMemory.layer)
  ))

const postgres = () =>
  Layer.mergeAll(
    ModelRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer)),
    FineTuneRepositoryPg.layer,
    RunRepositoryPg.layer,
    LeaderboardRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer)),
    WorkspaceRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer))
  ).pipe(
    Layer.provideMerge(layerMigrations),
    Layer.provideMerge(TestDatabase.layer)
  )

modelRepositoryContract("Postgres", postgres)
modelRepositoryPostgresContract(postgres)
