import { Cause, Context, Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { PgClient } from "@effect/sql-pg"
import { resolve } from "node:path"
import { EmbeddedPostgres } from "@podium/adapters-pg/EmbeddedPostgres"
import { layerMigrations } from "@podium/adapters-pg/Migrations"
import type { PodiumConfig } from "./Config.ts"

/** A layer whose failure (not an interruption) is replaced by `f` of it. */
const mapLayerError = <E2>(f: (error: unknown) => E2) => <A, E, R>(layer: Layer.Layer<A, E, R>): Layer.Layer<A, E2, R> =>
  Layer.catchCause(layer, (cause) =>
    Layer.effectContext<A, E2, never>(Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause as Cause.Cause<never>) : Effect.fail(f(Cause.squash(cause)))))

/** What went wrong with the database, naming the setting to fix and never the password. */
const databaseFailure = (config: PodiumConfig) => (error: unknown) => {
  // the innermost cause says it best ("connect ECONNREFUSED 127.0.0.1:5432", "password authentication failed")
  let reason = error instanceof Error ? error.message : String(error)
  for (let inner: unknown = error; inner instanceof Error; inner = inner.cause) if (inner.message !== "") reason = inner.message
  return Option.match(config.databaseUrl, {
    onNone: () => new Error(`the embedded PostgreSQL in DATA_DIR (${resolve(config.dataDir)}): ${reason}`),
    onSome: (url) => {
      let shown = "a value that is not a postgres:// URL"
      try {
        const parsed = new URL(Redacted.value(url))
        parsed.password = ""
        shown = parsed.toString()
      } catch {}
      return new Error(`DATABASE_URL (${shown}): ${reason}`)
    }
  })
}

/** A client for the configured PostgreSQL, or for an embedded one kept in DATA_DIR. */
export const layerDatabaseClient = (config: PodiumConfig) =>
  Option.match(config.databaseUrl, {
    onSome: (url) => PgClient.layer({ url }),
    onNone: () =>
      Layer.unwrap(Effect.gen(function*() {
        const { url } = yield* EmbeddedPostgres
        return PgClient.layer({ url })
      })).pipe(Layer.provide(EmbeddedPostgres.layer({ dataDir: resolve(config.dataDir) })))
  }).pipe(
    // connect now: a wrong URL or a database that is down is one clear line at start, not a stack later
    Layer.tap((context) => Context.get(context, SqlClient.SqlClient)`SELECT 1`),
    mapLayerError(databaseFailure(config))
  )

/** The database, migrated before anything uses it. */
export const layerDatabase = (config: PodiumConfig) =>
  layerMigrations.pipe(
    mapLayerError((error) => new Error(`migrations failed: ${error instanceof Error ? error.message : String(error)}`)),
    Layer.provideMerge(layerDatabaseClient(config))
  )
