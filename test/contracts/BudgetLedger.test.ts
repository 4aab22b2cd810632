import { BudgetLedgerPg } from "@podium/adapters-pg/access/BudgetLedgerPg"
import { IdGeneratorUuidV7 } from "@podium/adapters-node/IdGeneratorUuidV7"
import { layerMigrations } from "@podium/adapters-pg/Migrations"
import { BudgetLedgerMemory } from "@podium/domain/access/memory"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestDatabase } from "../support/database.ts"
import { budgetLedgerContract, ContractTokens } from "./BudgetLedger.contract.ts"

const newId = Effect.sync(() => crypto.randomUUID())

budgetLedgerContract("memory", () =>
  Layer.merge(BudgetLedgerMemory.layer, Layer.succeed(ContractTokens, ContractTokens.of({ make: newId }))))

/** Spend rows reference the token, and the token its workspace. */
const tokensPg = Layer.effect(
  ContractTokens,
  Effect.map(SqlClient.SqlClient, (sql) =>
    ContractTokens.of({
      make: Effect.gen(function*() {
        const [workspace, token] = [yield* newId, yield* newId]
        yield* sql`INSERT INTO workspaces (id, name, created_at) VALUES (${workspace}, 'contract', now())`
        yield* sql`INSERT INTO api_tokens (id, workspace_id, name, display_prefix, secret_hash, scopes, created_at)
                   VALUES (${token}, ${workspace}, 'contract', 'pod_', ${token}, '{}', now())`
        return token
      }).pipe(Effect.orDie)
    }))
)

budgetLedgerContract("Postgres", () =>
  Layer.mergeAll(BudgetLedgerPg.layer.pipe(Layer.provide(IdGeneratorUuidV7.layer)), tokensPg).pipe(
    Layer.provideMerge(layerMigrations),
    Layer.provideMerge(TestDatabase.layer)
  ))
