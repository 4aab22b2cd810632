/**
 * The real `podium` CLI as child processes: `node packages/server/src/bin.ts ...` from the repo
 * root, with an environment built here (nothing inherited but PATH and HOME, so a DATABASE_URL
 * set for the test run never leaks into a child that should use the embedded database).
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { SignJWT } from "jose"
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer as createHttpServer } from "node:http"
import { createConnection, createServer as createTcpServer } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { freshDatabaseUrl } from "./support/database.ts"
import { freePort } from "./support/Ports.ts"

const root = resolve(import.meta.dirname, "..")
const nodeBin = join(root, "node_modules", ".bin", "node")
const binTs = join("packages", "server", "src", "bin.ts")

const sessionSecret = "cli-test-session-secret-that-is-long-enough-0123456789"

type Env = Record<string, string>

interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

interface Child {
  readonly process: ChildProcess
  readonly dataDir: string
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<Finished>
}

const children = new Set<Child>()
const tempDirs = new Set<string>()

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "podium-cli-"))
  tempDirs.add(dir)
  return dir
}

const baseEnv = (): Env => ({
  PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
  HOME: process.env.HOME ?? tmpdir(),
  ...(process.env.TMPDIR === undefined ? {} : { TMPDIR: process.env.TMPDIR }),
  NO_COLOR: "1"
})

const spawnPodium = (args: ReadonlyArray<string>, env: Env): Child => {
  const dataDir = env.DATA_DIR ?? tempDir()
  const child = spawn(nodeBin, [binTs, ...args], {
    cwd: root,
    env: { ...baseEnv(), DATA_DIR: dataDir, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  const exited = new Promise<Finished>((resolve, reject) => {
    child.once("error", reject)
    child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
  const handle: Child = { process: child, dataDir, stdout: () => stdout, stderr: () => stderr, exited }
  children.add(handle)
  return handle
}

const withTimeout = <A>(promise: Promise<A>, ms: number, what: () => string): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what()}`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

const describeChild = (child: Child) =>
  `podium ${child.process.spawnargs.slice(2).join(" ")}\n--- stdout\n${child.stdout()}\n--- stderr\n${child.stderr()}`

/** Runs a command that should finish by itself. */
const runPodium = (args: ReadonlyArray<string>, env: Env = {}, timeoutMs = 30_000): Promise<Finished> => {
  const child = spawnPodium(args, env)
  return withTimeout(child.exited, timeoutMs, () => describeChild(child))
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const postmasterPid = (dataDir: string): number | undefined => {
  try {
    const pid = Number.parseInt(readFileSync(join(dataDir, "pg", "postmaster.pid"), "utf8").split("\n")[0] ?? "", 10)
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/**
 * Whether a postmaster on this data directory still runs. A zombie has exited: once `serve` exits
 * it is PID 1's to reap, which may take a moment. A reused pid runs something else.
 */
const postmasterRuns = (pid: number, dataDir: string) => {
  if (!isAlive(pid)) return false
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return false
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(join(dataDir, "pg"))
  } catch {
    return false
  }
}

/** SIGTERM, then SIGKILL; then stop an embedded postmaster the child may have left behind. */
const killChild = async (child: Child) => {
  const pid = postmasterPid(child.dataDir)
  if (child.process.exitCode === null && child.process.signalCode === null) {
    child.process.kill("SIGTERM")
    const stopped = await withTimeout(child.exited, 15_000, () => "").then(() => true, () => false)
    if (!stopped) {
      child.process.kill("SIGKILL")
      await child.exited.catch(() => undefined)
    }
  }
  if (pid !== undefined && postmasterRuns(pid, child.dataDir)) process.kill(pid, "SIGKILL")
}

afterEach(async () => {
  const running = [...children]
  children.clear()
  await Promise.all(running.map(killChild))
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
  tempDirs.clear()
}, 60_000)


const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Reply {
  readonly status: number
  readonly text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any
}

const request = async (
  base: string,
  method: string,
  path: string,
  options: {
    readonly token?: string
    readonly json?: unknown
    readonly timeoutMs?: number
    readonly signal?: AbortSignal
  } = {}
): Promise<Reply> => {
  const headers: Record<string, string> = {}
  if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`
  if (options.json !== undefined) headers["content-type"] = "application/json"
  const response = await fetch(base + path, {
    method,
    headers,
    body: options.json === undefined ? undefined : JSON.stringify(options.json),
    signal: AbortSignal.any([AbortSignal.timeout(options.timeoutMs ?? 10_000), ...(options.signal ? [options.signal] : [])])
  })
  const text = await response.text()
  let body: unknown = undefined
  try {
    body = text === "" ? undefined : JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: response.status, text, body }
}

interface Server extends Child {
  readonly url: string
  readonly health: Reply
}

/**
 * Starts `podium serve` on a free port and polls /healthz until it answers 200. Each poll has its
 * own short timeout: a request sent while the server is starting may never be answered (see the
 * start-up test below).
 */
const startServe = async (env: Env, withinMs = 60_000): Promise<Server> => {
  const port = await freePort()
  const child = spawnPodium(["serve"], { PORT: String(port), ...env })
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + withinMs
  while (Date.now() < deadline) {
    if (child.process.exitCode !== null || child.process.signalCode !== null) {
      throw new Error(`serve exited before it was healthy\n${describeChild(child)}`)
    }
    const health = await request(url, "GET", "/healthz", { timeoutMs: 2_000 }).catch(() => undefined)
    if (health?.status === 200) return { ...child, url, health }
    await sleep(250)
  }
  throw new Error(`serve was not healthy within ${withinMs} ms\n${describeChild(child)}`)
}

const stopWith = (child: Child, signal: NodeJS.Signals, timeoutMs = 30_000) => {
  child.process.kill(signal)
  return withTimeout(child.exited, timeoutMs, () => describeChild(child))
}

const jsonLines = (output: string) =>
  output.split("\n").filter((line) => line.trim() !== "").map((line) => {
    try {
      return JSON.parse(line) as Record<string, unknown>
    } catch {
      throw new Error(`not a JSON log line: ${line}`)
    }
  })

const signSession = (subject: string, email: string) =>
  new SignJWT({ email, email_verified: true })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime("10m")
    .sign(new TextEncoder().encode(sessionSecret))

const tableNames = (url: string) =>
  Effect.runPromise(Effect.gen(function*() {
    const sql = yield* PgClient.makeClient({ url: Redacted.make(url) })
    const rows = yield* sql<{ readonly table_name: string }>`
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`
    const applied = yield* sql<{ readonly count: string }>`SELECT count(*)::text AS count FROM podium_migrations`
    return { tables: rows.map((row) => row.table_name), migrations: Number(applied[0]?.count) }
  }).pipe(Effect.scoped, Effect.provide(Reactivity.layer)))

const jwtPattern = /^[\w-]+\.[\w-]+\.[\w-]+$/

describe("podium serve with the embedded database", () => {
  it("answers /healthz, logs JSON lines, and on SIGTERM exits 0 after stopping its postmaster", async () => {
    const server = await startServe({ LOG_LEVEL: "Info" })
    expect(server.health.body).toMatchObject({ ok: true, service: "podium", database: "up" })

    const pid = postmasterPid(server.dataDir)
    expect(pid, "postmaster.pid while serving").toBeTypeOf("number")
    expect(postmasterRuns(pid!, server.dataDir)).toBe(true)

    const finished = await stopWith(server, "SIGTERM")
    // SIGTERM interrupts the program; once its finalizers ran, that is a clean stop.
    expect({ code: finished.code, signal: finished.signal }).toEqual({ code: 0, signal: null })
    expect(existsSync(join(server.dataDir, "pg", "postmaster.pid"))).toBe(false)
    expect(postmasterRuns(pid!, server.dataDir), `postmaster pid ${pid} after serve exited`).toBe(false)

    expect(finished.stderr).toBe("")
    const logs = jsonLines(finished.stdout)
    for (const line of logs) {
      expect(line).toEqual(expect.objectContaining({
        message: expect.anything(),
        level: expect.stringMatching(/^(TRACE|DEBUG|INFO|WARN|ERROR|FATAL)$/),
        timestamp: expect.any(String)
      }))
    }
    const messages = logs.map((line) => String(line.message))
    expect(messages).toContain("podium listening")
    expect(messages).toContain(`stopping postgres (pid ${pid})`)
    expect(messages.some((m) => m.startsWith("stopped postgres in "))).toBe(true)
    expect(logs.find((line) => line.message === "request")).toMatchObject({
      level: "INFO",
      annotations: { method: "GET", path: "/healthz", status: 200 }
    })
  }, 90_000)

  it("walkthrough: dev-session signs in, POST /api/tokens creates a token, GET lists it, no secret in the logs", async () => {
    const server = await startServe({ LOG_LEVEL: "Info" })

    const devSession = await runPodium(["dev-session", "--email", "dev@example.com"], { DATA_DIR: server.dataDir })
    expect(devSession.code, devSession.stdout + devSession.stderr).toBe(0)
    const jwt = devSession.stdout.trim()
    expect(jwt).toMatch(jwtPattern)

    const created = await request(server.url, "POST", "/api/tokens", { token: jwt, json: { name: "walkthrough" } })
    expect(created.status, created.text).toBe(201)
    const secret: string = created.body.secret
    expect(secret.startsWith("pod_")).toBe(true)
    expect(created.body.token).toMatchObject({ name: "walkthrough", status: "active" })
    expect(secret.startsWith(created.body.token.prefix)).toBe(true)

    const listed = await request(server.url, "GET", "/api/tokens", { token: jwt })
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body.business_id).toBe(created.body.token.business_id)
    expect(listed.body.tokens).toEqual([expect.objectContaining({ id: created.body.token.id, name: "walkthrough" })])
    expect(listed.text).not.toContain(secret)
    expect(listed.body.tokens[0]).not.toHaveProperty("secret")

    const finished = await stopWith(server, "SIGTERM")
    const logs = finished.stdout + finished.stderr
    expect(logs).toContain("/api/tokens")
    expect(logs).not.toContain(secret)
    expect(logs).not.toContain(secret.slice(created.body.token.prefix.length))
    expect(logs).not.toContain(jwt)
  }, 90_000)

  // A listener opened before the handler is installed never answers what arrives in between; the
  // server opens its port only once everything is ready.
  it("answers a request that arrives while it is still starting", async () => {
    const port = await freePort()
    const server = spawnPodium(["serve"], { PORT: String(port), LOG_LEVEL: "Warn" })
    const accepting = async (): Promise<void> => {
      const open = await new Promise<boolean>((resolve) => {
        const socket = createConnection({ host: "127.0.0.1", port })
        socket.once("connect", () => (socket.destroy(), resolve(true)))
        socket.once("error", () => resolve(false))
      })
      if (!open) {
        if (server.process.exitCode !== null) throw new Error(describeChild(server))
        await sleep(10)
        return accepting()
      }
    }
    await withTimeout(accepting(), 60_000, () => describeChild(server))
    const started = Date.now()
    const giveUp = new AbortController()
    const early = request(`http://127.0.0.1:${port}`, "GET", "/healthz", { timeoutMs: 15_000, signal: giveUp.signal }).catch(
      (error: unknown) => ({ status: 0, text: `no answer after ${Date.now() - started} ms: ${String(error)}`, body: undefined })
    )
    // Meanwhile the server does become healthy: the early request is not merely slow.
    let healthyAfter: number | undefined
    while (healthyAfter === undefined && Date.now() - started < 15_000) {
      const health = await request(`http://127.0.0.1:${port}`, "GET", "/healthz", { timeoutMs: 1_000 }).catch(() => undefined)
      if (health?.status === 200) healthyAfter = Date.now() - started
      else await sleep(100)
    }
    // Give the early request a few seconds more than the server needed to become healthy.
    const reply = await Promise.race([
      early,
      sleep(5_000).then(() => ({ status: 0, text: `no answer ${Date.now() - started} ms after it was sent`, body: undefined }))
    ])
    // An unanswered connection also holds up the shutdown (about 20 s): close it first.
    giveUp.abort()
    expect(
      [200, 503],
      `GET /healthz sent as soon as the port accepted (a later one answered 200 after ${healthyAfter} ms): ${reply.text}`
    ).toContain(reply.status)
  }, 90_000)
})

describe("podium migrate", () => {
  it("migrates a fresh database, and a second run changes nothing", async () => {
    const databaseUrl = await freshDatabaseUrl()
    const first = await runPodium(["migrate"], { DATABASE_URL: databaseUrl, LOG_LEVEL: "Warn" })
    expect(first.code, first.stdout + first.stderr).toBe(0)
    expect(first.stdout).toContain("migrations: applied 0001_workspaces")
    const afterFirst = await tableNames(databaseUrl)
    expect(afterFirst.tables).toEqual(expect.arrayContaining([
      "api_tokens",
      "integrations",
      "invites",
      "memberships",
      "podium_migrations",
      "push_tokens",
      "users",
      "workspaces"
    ]))
    expect(afterFirst.migrations).toBeGreaterThan(0)

    const second = await runPodium(["migrate"], { DATABASE_URL: databaseUrl, LOG_LEVEL: "Warn" })
    expect(second.code, second.stdout + second.stderr).toBe(0)
    expect(second.stdout.trim()).toBe("migrations: nothing to apply")
    expect(await tableNames(databaseUrl)).toEqual(afterFirst)
  }, 60_000)
})

describe("podium token create", () => {
  it("refuses an unknown email, then mints a scoped pod_ token for a signed-in user", async () => {
    const databaseUrl = await freshDatabaseUrl()
    const env: Env = {
      DATABASE_URL: databaseUrl,
      SESSION_JWT_SECRET: sessionSecret,
      SECRETS_KEY: randomBytes(32).toString("hex"),
      LOG_LEVEL: "Warn"
    }
    const email = "ci-owner@example.com"
    const args = ["token", "create", "--email", email, "--name", "ci", "--scopes", "leaderboards:read"]

    const unknown = await runPodium(args, env)
    expect(unknown.code).not.toBe(0)
    expect(unknown.stdout + unknown.stderr).toContain(`No user with email ${email} has signed in yet`)

    const server = await startServe(env)
    const signedIn = await request(server.url, "GET", "/api/tokens", { token: await signSession("ci-owner", email) })
    expect(signedIn.status, signedIn.text).toBe(200)

    const minted = await runPodium(args, env)
    expect(minted.code, minted.stdout + minted.stderr).toBe(0)
    const printed = JSON.parse(minted.stdout.trim())
    expect(printed).toMatchObject({ business_id: signedIn.body.business_id, scopes: ["leaderboards:read"] })
    expect(printed.secret).toMatch(/^pod_/)

    const hubCheck = (token: string) =>
      request(server.url, "POST", "/api/datasets/hub/check", {
        token,
        json: { dataset_url: "https://huggingface.co/datasets/example/example" }
      })
    const forbidden = await hubCheck(printed.secret)
    expect(forbidden.status, forbidden.text).toBe(403)
    expect(forbidden.body.error.code).toBe("insufficient_scope")
    const stranger = await hubCheck(`pod_${randomBytes(24).toString("base64url")}`)
    expect(stranger.status, stranger.text).toBe(401)

    const listed = await request(server.url, "GET", "/api/tokens", { token: await signSession("ci-owner", email) })
    expect(listed.body.tokens).toEqual([expect.objectContaining({ id: printed.id, name: "ci", scopes: ["leaderboards:read"] })])
  }, 90_000)
})

describe("configuration", () => {
  it.each([
    ["PORT", "99999"],
    ["SECRETS_KEY", "short"]
  ])("a bad %s stops serve with a message naming it", async (name, value) => {
    const dataDir = tempDir()
    const finished = await runPodium(["serve"], { [name]: value, DATA_DIR: dataDir })
    expect(finished.code).toBe(1)
    const output = finished.stdout + finished.stderr
    expect(output).toContain("Invalid configuration")
    expect(output).toContain(name)
    expect(existsSync(join(dataDir, "pg")), "no database was started").toBe(false)
  }, 30_000)

  it.each([
    ["SESSION_JWKS_URL", { SESSION_JWKS_URL: "http://127.0.0.1:9/jwks.json" }],
    ["OIDC_ISSUER", { OIDC_ISSUER: "http://127.0.0.1:9", OIDC_CLIENT_ID: "podium-web" }]
  ])("SESSION_JWT_SECRET with %s stops serve with one line on stderr, before any database starts", async (other, env) => {
    const dataDir = tempDir()
    const finished = await runPodium(["serve"], { SESSION_JWT_SECRET: sessionSecret, ...env, DATA_DIR: dataDir })
    expect(finished.code).toBe(1)
    const lines = finished.stderr.trim().split("\n")
    expect(lines, finished.stderr).toHaveLength(1)
    expect(lines[0]).toMatch(new RegExp(`SESSION_JWT_SECRET and ${other} cannot both be set`))
    expect(existsSync(join(dataDir, "pg")), "no database was started").toBe(false)
  }, 30_000)

  it("dev-session refuses a --ttl longer than SESSION_MAX_AGE (the server would refuse the session)", async () => {
    const refused = await runPodium(["dev-session", "--email", "dev@example.com", "--ttl", "7200"], {
      SESSION_JWT_SECRET: sessionSecret,
      SESSION_MAX_AGE: "3600"
    })
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toMatch(/--ttl must be 1 to 3600 seconds \(SESSION_MAX_AGE\)/)
    expect(refused.stdout).not.toMatch(jwtPattern)
  }, 30_000)

  it("dev-session refuses when sessions are verified only against a JWKS, without fetching it", async () => {
    const refused = await runPodium(["dev-session", "--email", "dev@example.com"], {
      SESSION_JWKS_URL: "https://example.invalid/jwks.json"
    })
    expect(refused.code).not.toBe(0)
    expect(refused.stdout + refused.stderr).toMatch(/JWKS/)
    expect(refused.stdout).not.toMatch(jwtPattern)

    let fetched = 0
    const jwks = createHttpServer((_, response) => {
      fetched++
      response.writeHead(200, { "content-type": "application/json" }).end(`{"keys":[]}`)
    })
    await new Promise<void>((resolve) => jwks.listen(0, "127.0.0.1", resolve))
    try {
      const address = jwks.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      const local = await runPodium(["dev-session", "--email", "dev@example.com"], {
        SESSION_JWKS_URL: `http://127.0.0.1:${port}/jwks.json`,
        ALLOW_PRIVATE_NETWORK_TARGETS: "true"
      })
      expect(local.code).not.toBe(0)
      expect(local.stdout + local.stderr).toMatch(/JWKS/)
      expect(fetched).toBe(0)
    } finally {
      await new Promise((resolve) => jwks.close(resolve))
    }
  }, 30_000)

  it("dev-session refuses when sessions are an OpenID Connect provider's ID tokens, and says so", async () => {
    const refused = await runPodium(["dev-session", "--email", "dev@example.com"], {
      OIDC_ISSUER: "https://id.example.invalid",
      OIDC_CLIENT_ID: "podium-web"
    })
    expect(refused.code).not.toBe(0)
    expect(refused.stdout + refused.stderr).toMatch(/OIDC_ISSUER/)
    expect(refused.stdout).not.toMatch(jwtPattern)
  }, 30_000)
})

describe("a first run that just works", () => {
  it("a port in use is one line naming PORT, before any database starts", async () => {
    const holder = createTcpServer()
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve))
    const port = (holder.address() as { port: number }).port
    try {
      const dataDir = tempDir()
      const finished = await runPodium(["serve"], { PORT: String(port), DATA_DIR: dataDir })
      expect(finished.code).toBe(1)
      expect(finished.stderr.trim()).toBe(`podium: PORT ${port} is in use on 127.0.0.1: stop what holds it or set PORT`)
      expect(finished.stdout).toBe("")
      expect(existsSync(join(dataDir, "pg")), "no database was started").toBe(false)
    } finally {
      await new Promise((resolve) => holder.close(resolve))
    }
  }, 30_000)

  it("a bad or unreachable DATABASE_URL is one line naming it, without the password or a stack", async () => {
    for (const [url, reason] of [
      ["postgres://someone:hunter2@127.0.0.1:1/podium", "ECONNREFUSED"],
      ["not a url", "not a postgres:// URL"]
    ] as const) {
      for (const command of [["serve"], ["migrate"]]) {
        const finished = await runPodium(command, { DATABASE_URL: url, PORT: String(await freePort()) })
        expect(finished.code).toBe(1)
        const lines = finished.stderr.trim().split("\n")
        expect(lines, finished.stderr).toHaveLength(1)
        expect(lines[0]).toMatch(/^podium: DATABASE_URL/)
        expect(lines[0]).toContain(reason)
        expect(finished.stdout + finished.stderr).not.toContain("hunter2")
      }
    }
  }, 60_000)

  it("LOG_LEVEL is case-insensitive", async () => {
    for (const level of ["warn", "WARN", "Warn"]) {
      const finished = await runPodium(["migrate"], { DATABASE_URL: await freshDatabaseUrl(), LOG_LEVEL: level })
      expect(finished.code, finished.stderr).toBe(0)
    }
  }, 60_000)

  it("token create and migrate work beside a server on the embedded database, printing only their result", async () => {
    const dataDir = tempDir()
    const env: Env = { DATA_DIR: dataDir, SESSION_JWT_SECRET: sessionSecret, LOG_LEVEL: "info" }
    const server = await startServe(env)
    const email = "beside@example.com"
    const signedIn = await request(server.url, "GET", "/api/tokens", { token: await signSession("beside", email) })
    expect(signedIn.status, signedIn.text).toBe(200)

    const migrated = await runPodium(["migrate"], env)
    expect(migrated.code, migrated.stderr).toBe(0)
    expect(migrated.stdout).toBe("migrations: nothing to apply\n")

    const minted = await runPodium(["token", "create", "--email", email, "--scopes", "leaderboards:inference"], env)
    expect(minted.code, minted.stderr).toBe(0)
    expect(minted.stdout.trim().split("\n")).toHaveLength(1) // logs go to stderr
    const printed = JSON.parse(minted.stdout)
    expect(printed.secret).toMatch(/^pod_/)
    // the token works on the running server, whose database it was written to
    const used = await request(server.url, "POST", "/v1/leaderboard/00000000-0000-7000-8000-000000000000/inference", {
      token: printed.secret,
      json: { input: "hi" }
    })
    expect(used.status, used.text).toBe(404)
    // and the server still runs on its database
    expect((await request(server.url, "GET", "/healthz")).status).toBe(200)
  }, 120_000)
})


describe("the CLI helps a new user", () => {
  it("token create without --email or --business-id says so at once, before any database starts", async () => {
    const dataDir = tempDir()
    const finished = await runPodium(["token", "create", "--name", "ci"], { DATA_DIR: dataDir, LOG_LEVEL: "info" })
    expect(finished.code).not.toBe(0)
    expect(finished.stderr.trim()).toBe("podium: Give --business-id or --email")
    expect(finished.stdout).toBe("")
    expect(existsSync(join(dataDir, "pg")), "no database was started").toBe(false)
  }, 30_000)

  it("--help describes every command and subcommand", async () => {
    const help = await runPodium(["--help"])
    expect(help.code, help.stderr).toBe(0)
    for (const command of ["serve", "migrate", "token", "dev-session", "eval"]) {
      expect(help.stdout, command).toMatch(new RegExp(`^  ${command} +\\S`, "m"))
    }
    const token = await runPodium(["token", "--help"])
    expect(token.stdout).toMatch(/^DESCRIPTION\n  \S/m)
    expect(token.stdout).toMatch(/^  create +\S/m)
  }, 30_000)

  it("serve --help lists every environment variable the configuration reads", async () => {
    const help = await runPodium(["serve", "--help"])
    expect(help.code, help.stderr).toBe(0)
    // every upper-case name quoted in Config.ts, read here independently of how the CLI finds them
    const config = readFileSync(join(root, "packages", "server", "src", "Config.ts"), "utf8")
    const names = [...new Set([...config.matchAll(/"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{4,})"/g)].map((m) => m[1]!))]
    expect(names).toEqual(expect.arrayContaining(["PORT", "DATABASE_URL", "SMTP_URL", "LOG_LEVEL"]))
    for (const name of names) expect(help.stdout, name).toMatch(new RegExp(`\\b${name}\\b`))
  }, 30_000)

  it("dev-session prints only the token on stdout; its warnings go to stderr", async () => {
    const finished = await runPodium(["dev-session", "--email", "dev@example.com"], {
      DATABASE_URL: "postgres://podium@127.0.0.1:1/podium",
      LOG_LEVEL: "info"
    })
    expect(finished.code, finished.stderr).toBe(0)
    expect(finished.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/)
    expect(finished.stderr).toContain("No session setting")
  }, 30_000)
})
