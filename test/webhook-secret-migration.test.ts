import { assert, describe, it } from "@effect/vitest"
import { NodeServices } from "@effect/platform-node"
import { PgMigrator } from "@effect/sql-pg"
import { loader, runMigrations } from "@podium/adapters-pg/Migrations"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestDatabase } from "./support/database.ts"

// Migration 0027 records when a webhook's secret was made. A webhook set before it has no record:
// its last change (updated_at), the newest moment the secret can have been made, stands in.

const migrateUpTo = (last: number) =>
  PgMigrator.run({ loader: Effect.map(loader, (all) => all.filter(([id]) => id <= last)), table: "podium_migrations" })
    .pipe(Effect.provide(NodeServices.layer))

describe("migration 0027_webhook_secret_at", () => {
  it.layer(TestDatabase.layer, { timeout: 60_000 })((it) => {
    it.effect("backfills secret_created_at from updated_at and requires it from then on", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* migrateUpTo(26)
        const workspace = crypto.randomUUID()
        yield* sql`INSERT INTO workspaces (id, name, created_at) VALUES (${workspace}, 'migration', now())`
        const model = (id: string) =>
          sql`INSERT INTO models (id, workspace_id, name, creation_mode, auto_update_model, continuous_self_learning,
                hypertuning_parameters, created_at, updated_at)
              VALUES (${id}, ${workspace}, ${id}, 'manual', false, false, false, now(), now())`
        const [first, second] = [crypto.randomUUID(), crypto.randomUUID()]
        yield* model(first)
        yield* model(second)
        yield* sql`INSERT INTO model_webhooks (model_id, url, enabled, sealed_secret, updated_at) VALUES
          (${first}, 'https://a.example.com/', true, 'sealed:a', '2026-11-01T10:00:00.123Z'),
          (${second}, 'https://b.example.com/', false, 'sealed:b', '2026-11-20T08:30:00Z')`

        yield* runMigrations
        const rows = yield* sql<{ model_id: string; at: string }>`
          SELECT model_id::text AS model_id, to_char(secret_created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') AS at
          FROM model_webhooks ORDER BY updated_at`
        assert.deepStrictEqual(rows.map((r) => [r.model_id, r.at]), [
          [first, "2026-11-01T10:00:00.123"],
          [second, "2026-11-20T08:30:00.000"]
        ])
        const third = crypto.randomUUID()
        yield* model(third)
        const insert = (withTime: boolean) =>
          withTime
            ? sql`INSERT INTO model_webhooks (model_id, url, enabled, sealed_secret, secret_created_at, updated_at)
                VALUES (${third}, 'https://c.example.com/', true, 'sealed:c', now(), now())`
            : sql`INSERT INTO model_webhooks (model_id, url, enabled, sealed_secret, updated_at)
                VALUES (${third}, 'https://c.example.com/', true, 'sealed:c', now())`
        assert.strictEqual((yield* Effect.exit(insert(false)))._tag, "Failure")
        yield* insert(true)
      }))
  })
})
