import { assert, describe, layer } from "@effect/vitest"
import { layerMigrations } from "@podium/adapters-pg/Migrations"
import { ServingHistoryPg } from "@podium/adapters-pg/leaderboards/ServingHistoryPg"
import { LeaderboardId, ServingHistory } from "@podium/domain/leaderboards"
import { ServingHistoryMemory } from "@podium/domain/leaderboards/memory"
import { WorkspaceId } from "@podium/domain/shared"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestDatabase } from "../support/database.ts"
import { anEntry, ContractLeaderboards, servingHistoryContract } from "./ServingHistory.contract.ts"

const newIds = Effect.sync(() => ({
  workspace: WorkspaceId.make(crypto.randomUUID()),
  leaderboard: LeaderboardId.make(crypto.randomUUID())
}))

servingHistoryContract("memory", () =>
  Layer.merge(ServingHistoryMemory.layer, Layer.succeed(ContractLeaderboards, ContractLeaderboards.of({ make: newIds }))))

const leaderboardsPg = Layer.effect(
  ContractLeaderboards,
  Effect.map(SqlClient.SqlClient, (sql) =>
    ContractLeaderboards.of({
      make: Effect.flatMap(newIds, (ids) =>
        Effect.gen(function*() {
          yield* sql`INSERT INTO workspaces (id, name, created_at) VALUES (${ids.workspace}, 'contract', now())`
          yield* sql`INSERT INTO leaderboards (id, workspace_id, name, description, status, chosen_model_strategy,
                       schedule, challenge, extra, created_at, updated_at)
                     VALUES (${ids.leaderboard}, ${ids.workspace}, 'contract', '', 'active', 'ranking_winner',
                       '{}', '{}', '{}', now(), now())`
          return ids
        }).pipe(Effect.orDie))
    }))
)

const pgLayer = () =>
  Layer.mergeAll(ServingHistoryPg.layer, leaderboardsPg).pipe(
    Layer.provideMerge(layerMigrations),
    Layer.provideMerge(TestDatabase.layer)
  )

servingHistoryContract("Postgres", pgLayer)

describe("ServingHistory on Postgres: the table keeps its rows", () => {
  layer(pgLayer(), { timeout: 60_000 })((it) => {
    const storedEntry = Effect.gen(function*() {
      const owner = yield* (yield* ContractLeaderboards).make
      const entry = anEntry(owner, { minutes: 1 })
      yield* (yield* ServingHistory).append(entry)
      return { owner, entry }
    })
    const count = (id: string) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.map(
          sql<{ n: number }>`SELECT count(*)::int AS n FROM leaderboard_serving_history WHERE id = ${id}`.pipe(Effect.orDie),
          (rows) => rows[0]!.n
        ))
    /** The messages of the SQL error and its causes (Postgres's own among them), or "succeeded". */
    const attempt = (statement: Effect.Effect<unknown, unknown>) =>
      statement.pipe(
        Effect.as("succeeded"),
        Effect.catch((e) => {
          const messages: Array<string> = []
          for (let cause: unknown = e; cause instanceof Object && messages.length < 5; cause = (cause as { cause?: unknown }).cause) {
            messages.push(String((cause as { message?: unknown }).message))
          }
          return Effect.succeed(messages.join(" / "))
        })
      )

    it.effect("refuses UPDATE and DELETE of an entry in SQL", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { entry } = yield* storedEntry
        const updated = yield* attempt(sql`UPDATE leaderboard_serving_history SET reason = 'edited' WHERE id = ${entry.id}`)
        assert.include(updated, "is immutable")
        const deleted = yield* attempt(sql`DELETE FROM leaderboard_serving_history WHERE id = ${entry.id}`)
        assert.include(deleted, "is never deleted")
        assert.strictEqual(yield* count(entry.id), 1)
        const page = yield* (yield* ServingHistory).list(entry.leaderboard_id, { limit: 10 })
        assert.deepStrictEqual(page.entries, [entry])
      }))

    it.effect("keeps the entries of a (softly) deleted leaderboard; they go with its workspace", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { entry, owner } = yield* storedEntry
        yield* sql`UPDATE leaderboards SET deleted_at = now() WHERE id = ${owner.leaderboard}`.pipe(Effect.orDie)
        assert.strictEqual(yield* count(entry.id), 1)
        yield* sql`DELETE FROM workspaces WHERE id = ${owner.workspace}`.pipe(Effect.orDie)
        assert.strictEqual(yield* count(entry.id), 0)
      }))

    it.effect("refuses an entry of a leaderboard never stored", () =>
      Effect.gen(function*() {
        const owner = { workspace: WorkspaceId.make(crypto.randomUUID()), leaderboard: LeaderboardId.make(crypto.randomUUID()) }
        const exit = yield* Effect.exit((yield* ServingHistory).append(anEntry(owner, { minutes: 1 })))
        assert.strictEqual(exit._tag, "Failure")
      }))
  })
})
