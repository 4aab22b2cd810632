import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { WebSessionRepositoryPg } from "@podium/adapters-pg/access/WebSessionRepositoryPg"
import { WorkspaceRepositoryPg } from "@podium/adapters-pg/access/WorkspaceRepositoryPg"
import { layerMigrations } from "@podium/adapters-pg/Migrations"
import { WebSessionRepositoryMemory, WorkspaceRepositoryMemory } from "@podium/domain/access/memory"
import { Layer } from "effect"
import { TestDatabase } from "../support/database.ts"
import { webSessionRepositoryContract } from "./WebSessionRepository.contract.ts"

webSessionRepositoryContract("memory", () => Layer.mergeAll(WebSessionRepositoryMemory.layer, WorkspaceRepositoryMemory.layer))

webSessionRepositoryContract("Postgres", () =>
  Layer.mergeAll(WebSessionRepositoryPg.layer, WorkspaceRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer))).pipe(
    Layer.provideMerge(layerMigrations),
    Layer.provideMerge(TestDatabase.layer)
  ))
