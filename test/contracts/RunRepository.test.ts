import { WorkspaceRepositoryPg } from "@podium/adapters-pg/access/WorkspaceRepositoryPg"
import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { LeaderboardRepositoryPg } from "@podium/adapters-pg/leaderboards/LeaderboardRepositoryPg"
import { layerMigrations } from "@podium/adapters-pg/Migrations"
import { RunRepositoryPg } from "@podium/adapters-pg/runs/RunRepositoryPg"
import { WorkspaceRepositoryMemory } from "@podium/domain/access/memory"
import { LeaderboardRepositoryMemory } from "@podium/domain/leaderboards/memory"
import { RunRepositoryMemory } from "@podium/domain/runs/memory"
import { Layer } from "effect"
import { TestDatabase } from "../support/database.ts"
import { runRepositoryContract } from "./RunRepository.contract.ts"

runRepositoryContract("memory", () =>
  RunRepositoryMemory.layer.pipe(
    Layer.provideMerge(LeaderboardRepositoryMemory.layer),
    Layer.merge(WorkspaceRepositoryMemory.layer)
  ))

runRepositoryContract("Postgres", () =>
  Layer.mergeAll(
    RunRepositoryPg.layer,
    LeaderboardRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer)),
    WorkspaceRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer))
  ).pipe(
    Layer.provideMerge(layerMigrations),
    Layer.provideMerge(TestDatabase.layer)
  ))
