import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { WorkspaceRepositoryPg } from "@podium/adapters-pg/access/WorkspaceRepositoryPg"
import { layerMigrations } from "@podium/adapters-pg/Migrations"
import { WorkspaceRepositoryMemory } from "@podium/domain/access/memory"
import { Layer } from "effect"
import { TestDatabase } from "../support/database.ts"
import { workspaceRepositoryContract } from "./WorkspaceRepository.contract.ts"

workspaceRepositoryContract("memory", () => WorkspaceRepositoryMemory.layer)

workspaceRepositoryContract("Postgres", () =>
  WorkspaceRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer)).pipe(Layer.provideMerge(layerMigrations), Layer.provideMerge(TestDatabase.layer)))
