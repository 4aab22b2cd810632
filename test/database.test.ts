import { assert, describe, it, layer } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { freshDatabaseUrl, TestDatabase } from "./support/database.ts"

const notesIn = (url: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [table] = yield* sql<{ readonly exists: boolean }>`SELECT to_regclass('notes') IS NOT NULL AS exists`
    if (!table?.exists) return undefined
    const [row] = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM notes`
    return row?.n
  }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url) })))

describe("test databases", () => {
  it.live("two fresh databases do not share tables", () =>
    Effect.gen(function*() {
      const [first, second] = yield* Effect.promise(() => Promise.all([freshDatabaseUrl(), freshDatabaseUrl()]))
      assert.notStrictEqual(first, second)

      yield* Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE notes (body text NOT NULL)`
        yield* sql`INSERT INTO notes ${sql.insert([{ body: "a" }, { body: "b" }])}`
      }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(first) })))

      assert.strictEqual(yield* notesIn(first), 2)
      assert.strictEqual(yield* notesIn(second), undefined)
    }))
})

layer(TestDatabase.layer)("TestDatabase.layer", (it) => {
  it.effect("connects to its own empty database", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { url } = yield* TestDatabase
      const [row] = yield* sql<{ readonly db: string; readonly tables: number }>`
        SELECT current_database() AS db,
               (SELECT count(*)::int FROM pg_tables WHERE schemaname = 'public') AS tables`
      assert.strictEqual(`/${row?.db}`, new URL(Redacted.value(url)).pathname)
      assert.strictEqual(row?.tables, 0)
    }))
})
