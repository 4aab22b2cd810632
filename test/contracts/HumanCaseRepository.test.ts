import { WorkspaceRepositoryPg } from "@podium/adapters-pg/access/WorkspaceRepositoryPg"
import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { HumanCaseRepositoryPg } from "@podium/adapters-pg/human/HumanCaseRepositoryPg"
import { LeaderboardRepositoryPg } from "@podium/adapters-pg/leaderboards/LeaderboardRepositoryPg"
import { ServingHistoryPg } from "@podium/adapters-pg/leaderboards/ServingHistoryPg"
import { layerMigrations } from "@podium/adapters-pg/Migrations"
import { WorkspaceRepositoryMemory } from "@podium/domain/access/memory"
import { HumanCaseRepositoryMemory } from "@podium/domain/human/memory"
import { LeaderboardRepositoryMemory, ServingHistoryMemory } from "@podium/domain/leaderboards/memory"
import { Layer } from "effect"
import { TestDatabase } from "../support/database.ts"
import { humanCaseRepositoryContract } from "./HumanCaseRepository.contract.ts"

humanCaseRepositoryContract("memory", () =>
  HumanCaseRepositoryMemory.layer.pipe(
    Layer.provideMerge(Layer.merge(LeaderboardRepositoryMemory.layer, ServingHistoryMemory.layer)),
    Layer.merge(WorkspaceRepositoryMemory.layer)
  ))

humanCaseRepositoryContract("Postgres", () =>
  HumanCaseRepositoryPg.layer.pipe(
    Layer.provideMerge(Layer.merge(LeaderboardRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer)), ServingHistoryPg.layer)),
    Layer.merge(WorkspaceRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer))),
    Layer.provideMerge(layerMigrations),
    Layer.provideMerge(TestDatabase.layer)
  ))
