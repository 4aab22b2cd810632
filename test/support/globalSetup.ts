import { PgClient } from "@effect/sql-pg"
import { EmbeddedPostgres } from "@podium/adapters-pg/EmbeddedPostgres"
import { writeAssets } from "@podium/web/Assets"
import { Effect, ManagedRuntime, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { randomBytes } from "node:crypto"
import { chmod, mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    /** A superuser connection to the server that test databases are created on. */
    readonly podiumTestAdminUrl: string
    /** Every database created during this run is named `<prefix>_<random>`. */
    readonly podiumTestDatabasePrefix: string
    /** A directory of this run's own (Chromium for browser tests is unpacked there), removed at the end. */
    readonly podiumTestRunDir: string
  }
}

/**
 * One PostgreSQL server for the whole run: the one `DATABASE_URL` points at (CI), or else an
 * embedded one in a temporary directory. Test files create their own databases on it
 * (test/support/database.ts); this removes them, or the whole embedded server, at the end. It also
 * builds the web app first.
 */
export default async function setup(project: TestProject) {
  // the web app as the sources say now, so no test meets a build older than its checkout
  await writeAssets()
  const runDir = await mkdtemp(join(tmpdir(), "podium-test-run-"))
  project.provide("podiumTestRunDir", runDir)
  const removeRunDir = () => rm(runDir, { recursive: true, force: true })
  const prefix = `podium_test_${Date.now().toString(36)}_${randomBytes(3).toString("hex")}`
  project.provide("podiumTestDatabasePrefix", prefix)

  const external = process.env.DATABASE_URL
  if (external !== undefined && external !== "") {
    project.provide("podiumTestAdminUrl", external)
    return async () => {
      await Effect.runPromise(dropDatabases(Redacted.make(external), prefix))
      await removeRunDir()
    }
  }

  const dataDir = await mkdtemp(join(tmpdir(), "podium-test-pg-"))
  // As root, postgres runs as another OS user that must be able to enter this directory.
  await chmod(dataDir, 0o711)
  const runtime = ManagedRuntime.make(EmbeddedPostgres.layer({ dataDir }))
  const removeDataDir = () => rm(dataDir, { recursive: true, force: true })
  try {
    const { url } = await runtime.runPromise(EmbeddedPostgres)
    project.provide("podiumTestAdminUrl", Redacted.value(url))
  } catch (error) {
    await runtime.dispose()
    await removeDataDir()
    await removeRunDir()
    throw error
  }
  return async () => {
    await runtime.dispose()
    await removeDataDir()
    await removeRunDir()
  }
}

const dropDatabases = (adminUrl: Redacted.Redacted<string>, prefix: string) =>
  Effect.gen(function*() {
    const sql = yield* PgClient.makeClient({ url: adminUrl })
    const databases = yield* sql<{ readonly datname: string }>`
      SELECT datname FROM pg_database WHERE starts_with(datname, ${`${prefix}_`})`
    for (const { datname } of databases) {
      yield* sql`DROP DATABASE IF EXISTS ${sql(datname)} WITH (FORCE)`
    }
  }).pipe(Effect.scoped, Effect.provide(Reactivity.layer))
