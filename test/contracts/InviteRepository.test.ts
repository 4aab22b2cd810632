import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { InviteRepositoryPg } from "@podium/adapters-pg/access/InviteRepositoryPg"
import { WorkspaceRepositoryPg } from "@podium/adapters-pg/access/WorkspaceRepositoryPg"
import { layerMigrations } from "@podium/adapters-pg/Migrations"
import { InviteRepositoryMemory, WorkspaceRepositoryMemory } from "@podium/domain/access/memory"
import { Layer } from "effect"
import { TestDatabase } from "../support/database.ts"
import { inviteRepositoryContract } from "./InviteRepository.contract.ts"

inviteRepositoryContract("memory", () => InviteRepositoryMemory.layer.pipe(Layer.provideMerge(WorkspaceRepositoryMemory.layer)))

inviteRepositoryContract("Postgres", () =>
  Layer.mergeAll(InviteRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer)), WorkspaceRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer))).pipe(
    Layer.provideMerge(layerMigrations),
    Layer.provideMerge(TestDatabase.layer)
  ))
