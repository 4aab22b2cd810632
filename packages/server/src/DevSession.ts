import { Effect, Option, Redacted } from "effect"
import { SignJWT } from "jose"
import type { PodiumConfig } from "./Config.ts"
import { resolveSessionSecret } from "./LocalState.ts"

/** The subject a dev session uses for an email, so the same email always signs in as the same user. */
export const devSubject = (email: string) => `dev|${email.toLowerCase()}`

/**
 * Mints a session JWT signed with the HS256 secret (configured, or kept in DATA_DIR), its email
 * verified (so it takes invites). Refuses when sessions are verified against a JWKS
 * (SESSION_JWKS_URL, or the OIDC_ISSUER's): then only the identity provider can sign in; and a
 * lifetime the server would refuse (longer than SESSION_MAX_AGE).
 */
export const mintDevSession = (config: PodiumConfig, email: string, ttlSeconds: number) =>
  Effect.gen(function*() {
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > config.sessionMaxAge) {
      return yield* Effect.fail(
        new Error(`--ttl must be 1 to ${config.sessionMaxAge} seconds (SESSION_MAX_AGE): a longer session is refused`)
      )
    }
    const sessionSecret = yield* resolveSessionSecret(config)
    if (Option.isNone(sessionSecret)) {
      return yield* Effect.fail(
        new Error(
          "dev-session needs an HS256 secret: sessions here are verified against " +
            (Option.isSome(config.sessionJwksUrl) ? "SESSION_JWKS_URL" : "the OIDC_ISSUER's keys (sign in through the web app)")
        )
      )
    }
    let jwt = new SignJWT({ email, email_verified: true })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setSubject(devSubject(email))
      .setIssuedAt()
      .setExpirationTime(`${ttlSeconds}s`)
    if (Option.isSome(config.sessionJwtIssuer)) jwt = jwt.setIssuer(config.sessionJwtIssuer.value)
    if (Option.isSome(config.sessionJwtAudience)) jwt = jwt.setAudience(config.sessionJwtAudience.value)
    const key = new TextEncoder().encode(Redacted.value(sessionSecret.value))
    return yield* Effect.promise(() => jwt.sign(key))
  })
