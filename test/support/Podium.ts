import { Effect, Layer, ManagedRuntime } from "effect"
import { HttpServer } from "effect/http"
import { SignJWT } from "jose"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeApp } from "@podium/server/App"
import { layerLogging } from "@podium/server/Logging"
import { loadConfig, type PodiumConfig } from "@podium/server/Config"

/**
 * The whole service, composed as in production, on an ephemeral loopback port, in this process:
 * the one way tests and benchmarks start Podium.
 */

export const sessionSecret = "test-session-secret-that-is-long-enough-0123456789"
// One per process: a second server on the same database must read what the first encrypted.
const secretsKey = randomBytes(32).toString("hex")

export interface Podium {
  readonly url: string
  readonly config: PodiumConfig
  readonly databaseUrl: string
  /** Real HTTP to the running server; JSON bodies are serialised, `body: string` is sent as is. */
  readonly request: (method: string, path: string, options?: RequestOptions) => Promise<Reply>
  readonly stop: () => Promise<void>
}

export interface RequestOptions {
  readonly token?: string | undefined
  readonly json?: unknown
  readonly body?: string | undefined
  readonly headers?: Record<string, string> | undefined
}

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly body: any
}

export interface StartOptions {
  /** Replaces the JSON log lines on stdout (a benchmark tallies them instead). */
  readonly logging?: Layer.Layer<never> | undefined
  /** Provided to the whole app, e.g. a tracer that counts outbound calls. */
  readonly tracing?: Layer.Layer<never> | undefined
  /** false: the inference routes go through the router like every other (the front door is off). */
  readonly fastInference?: boolean | undefined
}

/**
 * Starts Podium with test defaults overridden by `env`; without a `DATABASE_URL` in `env`, on a
 * fresh database of the test run (see database.ts).
 */
export const startPodium = async (
  env: Record<string, string | undefined> = {},
  options: StartOptions = {}
): Promise<Podium> => {
  const databaseUrl = env["DATABASE_URL"] ?? await (await import("./database.ts")).freshDatabaseUrl()
  const dataDir = mkdtempSync(join(tmpdir(), "podium-test-"))
  const config = await Effect.runPromise(loadConfig({
    DATA_DIR: dataDir,
    SESSION_JWT_SECRET: sessionSecret,
    SECRETS_KEY: secretsKey,
    ALLOW_PRIVATE_NETWORK_TARGETS: "true",
    LOG_LEVEL: "Error",
    ...env,
    DATABASE_URL: databaseUrl
  }))
  const app = makeApp(config, { port: 0, host: "127.0.0.1", fastInference: options.fastInference }).pipe(Layer.provide(options.logging ?? layerLogging(config)))
  const runtime = ManagedRuntime.make(options.tracing === undefined ? app : app.pipe(Layer.provide(options.tracing)))
  const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (s) => s.address))
  if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
  const url = `http://127.0.0.1:${address.port}`
  return {
    url,
    config,
    databaseUrl,
    request: (method, path, options = {}) => request(url, method, path, options),
    stop: async () => {
      await runtime.dispose()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

export const request = async (base: string, method: string, path: string, options: RequestOptions = {}): Promise<Reply> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token !== undefined) headers["authorization"] = `Bearer ${options.token}`
  let body = options.body
  if (options.json !== undefined) {
    body = JSON.stringify(options.json)
    headers["content-type"] ??= "application/json"
  }
  const response = await fetch(base + path, { method, headers, body })
  const text = await response.text()
  let parsed: unknown = undefined
  try {
    parsed = text === "" ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: response.status, headers: response.headers, text, body: parsed }
}

export interface SessionOptions {
  readonly email?: string | null
  /** The `email_verified` claim sent with an email; true unless given. */
  readonly emailVerified?: boolean
  readonly secret?: string
  readonly expiresIn?: string
  readonly alg?: "HS256" | "HS384" | "HS512"
}

/** A session JWT as the identity provider would issue it. */
export const session = (subject: string, options: SessionOptions = {}): Promise<string> => {
  const email = options.email === undefined ? `${subject}@example.com` : options.email
  const claims: Record<string, unknown> = {}
  if (email !== null) claims["email"] = email
  if (email !== null) claims["email_verified"] = options.emailVerified ?? true
  return new SignJWT(claims)
    .setProtectedHeader({ alg: options.alg ?? "HS256" })
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? "1h")
    .sign(new TextEncoder().encode(options.secret ?? sessionSecret))
}
