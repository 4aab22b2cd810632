import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime, References } from "effect"
import { HttpServer } from "effect/http"
import { SignJWT } from "jose"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeApp } from "@podium/server/App"
import { loadConfig } from "@podium/server/Config"
import { createHoldingServer } from "@podium/server/HoldingServer"
import { LogTally } from "./LogTally.ts"
import type { SpanCounter } from "./SpanCounter.ts"

export const sessionSecret = "podium-bench-session-secret-0123456789abcdef"
// One per run: a second server on the same database must read what the first encrypted.
const secretsKey = randomBytes(32).toString("hex")

export interface Podium {
  readonly url: string
  /** What the server logged at LOG_LEVEL (Warn) and above; reset it before a measurement. */
  readonly logs: LogTally
  readonly stop: () => Promise<void>
}

/**
 * The whole service, composed as in production, on an ephemeral loopback port, in this process.
 * With `calls`, its tracer counts outbound calls per request (and slows requests down a little).
 */
export const startPodium = async (
  databaseUrl: string,
  env: Record<string, string> = {},
  calls?: SpanCounter
): Promise<Podium> => {
  const dataDir = mkdtempSync(join(tmpdir(), "podium-bench-"))
  const config = await Effect.runPromise(loadConfig({
    DATA_DIR: dataDir,
    SESSION_JWT_SECRET: sessionSecret,
    SECRETS_KEY: secretsKey,
    LOG_LEVEL: "Warn",
    ...env,
    DATABASE_URL: databaseUrl
  }))
  const logs = new LogTally(calls === undefined ? "server" : "call-counting server")
  const server = NodeHttpServer.layer(createHoldingServer, { port: 0, host: "127.0.0.1" })
  // As layerLogging, but tallied on stderr rather than one JSON line per event on stdout.
  const logging = Layer.mergeAll(logs.layer, Layer.succeed(References.MinimumLogLevel, config.logLevel))
  const app = makeApp(config, server).pipe(Layer.provide(logging))
  const runtime = ManagedRuntime.make(calls === undefined ? app : app.pipe(Layer.provide(calls.layer)))
  const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (s) => s.address))
  if (address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
  return {
    url: `http://127.0.0.1:${address.port}`,
    logs,
    stop: async () => {
      await runtime.dispose()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

/** A session JWT as the identity provider would issue it, with a verified email. */
export const session = (subject: string): Promise<string> =>
  new SignJWT({ email: `${subject}@example.com`, email_verified: true })
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime("4h")
    .sign(new TextEncoder().encode(sessionSecret))
