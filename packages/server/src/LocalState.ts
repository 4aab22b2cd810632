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
    const secretsKey = yield* resolveSecretsKey(config)
    const sessionSecret = yield* resolveSessionSecret(config)
    return { secretsKey, sessionSecret } satisfies Secrets
  })

const dataDirOf = (config: PodiumConfig) => resolve(config.dataDir)
const shared = (config: PodiumConfig) => Option.isSome(config.databaseUrl)

export const resolveSecretsKey = (config: PodiumConfig) =>
  Option.match(config.secretsKey, {
    onSome: (key) => Effect.succeed(decodeSecretsKey(key)),
    onNone: () =>
      Effect.sync(() => keepFile(dataDirOf(config), "secrets.key", () => randomBytes(32).toString("hex"))).pipe(
        Effect.tap(() =>
          shared(config) ? Effect.logWarning("SECRETS_KEY is unset: using the key kept in DATA_DIR") : Effect.void
        ),
        Effect.map((hex) => decodeSecretsKey(Redacted.make(hex)))
      )
  })

/**
 * The HS256 session secret: configured, else none when a JWKS or an OpenID Connect provider is
 * configured, else kept in DATA_DIR.
 */
export const resolveSessionSecret = (config: PodiumConfig): Effect.Effect<Option.Option<Redacted.Redacted<string>>> =>
  Option.isSome(config.sessionJwtSecret)
    ? Effect.succeed(config.sessionJwtSecret)
    : Option.isSome(config.sessionJwksUrl) || Option.isSome(config.oidcIssuer)
    ? Effect.succeedNone
    : Effect.sync(() => keepFile(dataDirOf(config), "session.secret", () => randomBytes(48).toString("base64url"))).pipe(
      Effect.tap(() =>
        shared(config) ? Effect.logWarning("No session setting: using the HS256 secret kept in DATA_DIR") : Effect.void
      ),
      Effect.map((secret) => Option.some(Redacted.make(secret)))
    )
