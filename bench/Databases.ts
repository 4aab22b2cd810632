import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, ManagedRuntime, Redacted, References } from "effect"
import { Reactivity } from "effect/reactivity"
import type { SqlClient } from "effect/sql"
import { EmbeddedPostgres } from "@podium/adapters-pg/EmbeddedPostgres"
import { randomBytes } from "node:crypto"
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** Fresh, empty databases on one PostgreSQL server, each dropped on `close`. */
export interface Databases {
  /** Where they live, for the report: "DATABASE_URL" or "embedded". */
  readonly server: string
  /** The URL of a new empty database. */
  readonly create: () => Promise<string>
  readonly close: () => Promise<void>
}

/** On the server of `adminUrl` (any database on it) when given, else on an embedded PostgreSQL in a temp dir. */
export const openDatabases = async (adminUrl: string | undefined): Promise<Databases> => {
  const host = adminUrl === undefined ? await startEmbedded() : { adminUrl, stop: async () => {} }
  const created: Array<string> = []
  const admin = <A>(statement: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
    Effect.runPromise(
      PgClient.makeClient({ url: Redacted.make(host.adminUrl) }).pipe(
        Effect.flatMap(statement),
        Effect.scoped,
        Effect.provide(Reactivity.layer)
      )
    )
  return {
    server: adminUrl === undefined ? "embedded" : "DATABASE_URL",
    create: async () => {
      const name = `podium_bench_${randomBytes(4).toString("hex")}`
      await admin((sql) => sql`CREATE DATABASE ${sql(name)}`)
      created.push(name)
      const url = new URL(host.adminUrl)
      url.pathname = `/${name}`
      return url.href
    },
    close: async () => {
      try {
        for (const name of created.splice(0)) {
          await admin((sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`)
        }
      } finally {
        await host.stop()
      }
    }
  }
}

const startEmbedded = async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "podium-bench-pg-"))
  // Postgres runs as another OS user when we are root, and must reach its cluster below this.
  chmodSync(dataDir, 0o711)
  const runtime = ManagedRuntime.make(
    EmbeddedPostgres.layer({ dataDir }).pipe(Layer.provide(Layer.succeed(References.MinimumLogLevel, "Warn")))
  )
  const { url } = await runtime.runPromise(EmbeddedPostgres)
  const adminUrl = new URL(Redacted.value(url))
  adminUrl.pathname = "/postgres"
  return {
    adminUrl: adminUrl.href,
    stop: async () => {
      await runtime.dispose()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}
