import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import type { SqlClient, SqlError } from "effect/sql"
import { randomBytes } from "node:crypto"
import { inject } from "vitest"

/**
 * Creates an empty database on the run's server (see globalSetup.ts) and returns its URL, so
 * each test file, or each layer, works in isolation. The run drops them at the end.
 */
export const freshDatabase: Effect.Effect<Redacted.Redacted<string>, SqlError.SqlError> = Effect.gen(function*() {
  const adminUrl = inject("podiumTestAdminUrl")
  const name = `${inject("podiumTestDatabasePrefix")}_${randomBytes(4).toString("hex")}`
  const sql = yield* PgClient.makeClient({ url: Redacted.make(adminUrl) })
  yield* sql`CREATE DATABASE ${sql(name)}`
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return Redacted.make(url.href)
}).pipe(Effect.scoped, Effect.provide(Reactivity.layer))

export const freshDatabaseUrl = (): Promise<string> => Effect.runPromise(Effect.map(freshDatabase, Redacted.value))

/** A fresh database per build of the layer, with a pooled client on it. */
export class TestDatabase extends Context.Service<TestDatabase, {
  readonly url: Redacted.Redacted<string>
}>()("@podium/test/TestDatabase") {
  static readonly layerUrl: Layer.Layer<TestDatabase, SqlError.SqlError> = Layer.effect(
    TestDatabase,
    Effect.map(freshDatabase, (url) => TestDatabase.of({ url }))
  )

  static readonly layer: Layer.Layer<TestDatabase | PgClient.PgClient | SqlClient.SqlClient, SqlError.SqlError> =
    Layer.unwrap(Effect.map(TestDatabase, ({ url }) => PgClient.layer({ url }))).pipe(
      Layer.provideMerge(TestDatabase.layerUrl)
    )
}
