import { LeaderboardRepositoryPg } from "@podium/adapters-pg/leaderboards/LeaderboardRepositoryPg"
import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { layerMigrations } from "@podium/adapters-pg/Migrations"
import { LeaderboardRepositoryMemory } from "@podium/domain/leaderboards/memory"
import { WorkspaceId } from "@podium/domain/shared"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestDatabase } from "../support/database.ts"
import { ContractWorkspaces, leaderboardRepositoryContract } from "./LeaderboardRepository.contract.ts"

const newId = Effect.sync(() => WorkspaceId.make(crypto.randomUUID()))

leaderboardRepositoryContract("memory", () =>
  Layer.merge(LeaderboardRepositoryMemory.layer, Layer.succeed(ContractWorkspaces, ContractWorkspaces.of({ make: newId }))))

const workspacesPg = Layer.effect(
  ContractWorkspaces,
  Effect.map(SqlClient.SqlClient, (sql) =>
    ContractWorkspaces.of({
      make: Effect.flatMap(newId, (id) =>
        sql`INSERT INTO workspaces (id, name, created_at) VALUES (${id}, 'contract', now())`.pipe(Effect.as(id), Effect.orDie))
    }))
)

leaderboardRepositoryContract("Postgres", () =>
  Layer.mergeAll(LeaderboardRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer)), workspacesPg).pipe(
    Layer.provideMerge(layerMigrations),
    Layer.provideMerge(TestDatabase.layer)
  ))
