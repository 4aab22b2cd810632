import { Effect, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { decodeSecretsKey, type PodiumConfig } from "./Config.ts"

export interface Secrets {
  readonly secretsKey: Redacted.Redacted<Uint8Array>
  /** HS256 session secret, unless sessions are verified against a JWKS. */
  readonly sessionSecret: Option.Option<Redacted.Redacted<string>>
}

const keepFile = (dir: string, name: string, make: () => string): string => {
  const path = join(dir, name)
  if (existsSync(path)) return readFileSync(path, "utf8").trim()
  mkdirSync(dir, { recursive: true })
  writeFileSync(path, make() + "\n", { mode: 0o600, flag: "wx" })
  chmodSync(path, 0o600)
  return readFileSync(path, "utf8").trim()
}

/**
 * Secrets from the environment, or, when unset, generated once and kept in DATA_DIR (mode 0600) so
 * a fresh machine works out of the box. Several instances on one database must share them: set
 * SECRETS_KEY and a session setting explicitly there (a warning says so).
 */
export const resolveSecrets = (config: PodiumConfig) =>
  Effect.gen(function*() {
    const dataDir = resolve(config.dataDir)
    const shared = Option.isSome(config.databaseUrl)
    const secretsKey = yield* Option.match(config.secretsKey, {
      onSome: (key) => Effect.succeed(decodeSecretsKey(key)),
      onNone: () =>
        Effect.sync(() => keepFile(dataDir, "secrets.key", () => randomBytes(32).toString("hex"))).pipe(
          Effect.tap(() => shared ? Effect.logWarning("SECRETS_KEY is unset: using the key kept in DATA_DIR") : Effect.void),
          Effect.map((hex) => decodeSecretsKey(Redacted.make(hex)))
        )
    })
    const sessionSecret = Option.isSome(config.sessionJwtSecret)
      ? config.sessionJwtSecret
      : Option.isSome(config.sessionJwksUrl)
      ? Option.none()
      : Option.some(Redacted.make(
        yield* Effect.sync(() => keepFile(dataDir, "session.secret", () => randomBytes(48).toString("base64url"))).pipe(
          Effect.tap(() =>
            shared ? Effect.logWarning("No session setting: using the HS256 secret kept in DATA_DIR") : Effect.void
          )
        )
      ))
    return { secretsKey, sessionSecret } satisfies Secrets
  })
