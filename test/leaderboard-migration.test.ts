import { assert, describe, it } from "@effect/vitest"
import { NodeServices } from "@effect/platform-node"
import { PgMigrator } from "@effect/sql-pg"
import { loader, runMigrations } from "@podium/adapters-pg/Migrations"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestDatabase } from "./support/database.ts"

// Migration 0012 makes the chosen candidate a foreign key: a choice stored before it that names no
// candidate of its leaderboard must be cleared first, as removing the candidate would have done.

const migrateUpTo = (last: number) =>
  PgMigrator.run({ loader: Effect.map(loader, (all) => all.filter(([id]) => id <= last)), table: "podium_migrations" })
    .pipe(Effect.provide(NodeServices.layer))

describe("migration 0012_leaderboard_version", () => {
  it.layer(TestDatabase.layer, { timeout: 60_000 })((it) => {
    it.effect("clears choices of missing or other leaderboards' candidates, keeps the rest, and starts every version at 1", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* migrateUpTo(11)
        const workspace = crypto.randomUUID()
        yield* sql`INSERT INTO workspaces (id, name, created_at) VALUES (${workspace}, 'migration', now())`
        const [kept, missing, foreign] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()]
        const candidate = crypto.randomUUID()
        const leaderboard = (id: string, strategy: string, chosen: string | null) =>
          sql`INSERT INTO leaderboards (id, workspace_id, name, description, status, chosen_model_strategy,
                chosen_leaderboard_model_id, schedule, challenge, extra, created_at, updated_at)
              VALUES (${id}, ${workspace}, ${id}, '', 'active', ${strategy}, ${chosen}, '{}', '{}', '{}', now(), now())`
        yield* leaderboard(kept, "manual", candidate)
        yield* leaderboard(missing, "manual", crypto.randomUUID())
        yield* leaderboard(foreign, "ranking_winner", candidate)
        yield* sql`INSERT INTO leaderboard_models (id, leaderboard_id, name, platform, model_name, auth_type, created_at)
                   VALUES (${candidate}, ${kept}, 'kept', 'Router', 'vendor/model', 'bearer', now())`

        yield* runMigrations
        const choices = () =>
          sql<{ id: string; chosen_model_strategy: string; chosen_leaderboard_model_id: string | null; version: number }>`
            SELECT id, chosen_model_strategy, chosen_leaderboard_model_id, version FROM leaderboards`
        const byId = <Row extends { id: string }>(rows: ReadonlyArray<Row>) =>
          Object.fromEntries(rows.map(({ id, ...row }) => [id, row]))
        assert.deepStrictEqual(byId(yield* choices()), {
          [kept]: { chosen_model_strategy: "manual", chosen_leaderboard_model_id: candidate, version: 1 },
          [missing]: { chosen_model_strategy: "ranking_winner", chosen_leaderboard_model_id: null, version: 1 },
          [foreign]: { chosen_model_strategy: "ranking_winner", chosen_leaderboard_model_id: null, version: 1 }
        })

        // from now on the database holds the rule: deleting the candidate clears its choice
        yield* sql`DELETE FROM leaderboard_models WHERE id = ${candidate}`
        assert.isNull(byId(yield* choices())[kept]!.chosen_leaderboard_model_id)
      }))
  })
})

// Migration 0022 makes model_url the candidate's endpoint: a candidate stored before it with only `url`
// (its alias) gets it as model_url too, so every candidate answers the endpoint under both names.
describe("migration 0022_candidate_model_url", () => {
  it.layer(TestDatabase.layer, { timeout: 60_000 })((it) => {
    it.effect("copies url into model_url; a candidate without url keeps its model_url", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* migrateUpTo(21)
        const workspace = crypto.randomUUID()
        const leaderboard = crypto.randomUUID()
        yield* sql`INSERT INTO workspaces (id, name, created_at) VALUES (${workspace}, 'migration', now())`
        yield* sql`INSERT INTO leaderboards (id, workspace_id, name, description, status, chosen_model_strategy,
                     schedule, challenge, extra, created_at, updated_at)
                   VALUES (${leaderboard}, ${workspace}, 'lb', '', 'active', 'ranking_winner', '{}', '{}', '{}', now(), now())`
        const candidate = (name: string, platform: string, url: string | null, modelUrl: string | null) =>
          sql`INSERT INTO leaderboard_models (id, leaderboard_id, name, platform, model_name, url, model_url, auth_type, created_at)
              VALUES (${crypto.randomUUID()}, ${leaderboard}, ${name}, ${platform}, 'm', ${url}, ${modelUrl}, 'none', now())`
        yield* candidate("custom", "Custom", "https://llm.example.com/v1", null)
        yield* candidate("custom with a page", "Custom", "https://llm.example.com/v1", "https://example.com/model-page")
        yield* candidate("hub", "Hub", null, "https://hub.example.com/org/model")
        yield* candidate("router", "Router", null, null)

        yield* runMigrations
        const rows = yield* sql<{ name: string; url: string | null; model_url: string | null }>`
          SELECT name, url, model_url FROM leaderboard_models ORDER BY name`
        assert.deepStrictEqual(rows.map((r) => [r.name, r.url, r.model_url]), [
          ["custom", "https://llm.example.com/v1", "https://llm.example.com/v1"],
          ["custom with a page", "https://llm.example.com/v1", "https://llm.example.com/v1"],
          ["hub", null, "https://hub.example.com/org/model"],
          ["router", null, null]
        ])
      }))
  })
})
