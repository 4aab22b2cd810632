import { Clock, DateTime, Effect, Layer, Option, Redacted } from "effect"
import { createRemoteJWKSet, customFetch, type JWTPayload, jwtVerify, type JWTVerifyGetKey } from "jose"
import { createSecretKey } from "node:crypto"
import { Unauthenticated, SessionVerifier } from "@podium/domain/access"
import { isStorableText } from "@podium/domain/shared"

export interface SessionVerifierOptions {
  /** HS256 shared secret. */
  readonly secret?: Redacted.Redacted<string> | undefined
  /**
   * Remote JWKS (RS256/ES256), fetched through `fetch` (our SSRF-safe one); a function when the URL
   * itself comes from the identity provider's discovery document.
   */
  readonly jwksUrl?: string | (() => Promise<string>) | undefined
  readonly fetch?: ((input: string | URL, init?: RequestInit) => Promise<Response>) | undefined
  readonly issuer?: string | undefined
  readonly audience?: string | undefined
  /** The longest a session may last, `exp` - `iat` (SESSION_MAX_AGE); 24 hours when unset. */
  readonly maxAgeSeconds?: number | undefined
  /** Issuers whose emails count as verified when their sessions send no `email_verified` at all. */
  readonly trustedEmailIssuers?: ReadonlyArray<string> | undefined
}

/** How far apart our clock and the identity provider's may be, for `exp`, `nbf` and `iat`. */
export const sessionClockSkewSeconds = 60
export const defaultSessionMaxAgeSeconds = 24 * 60 * 60

const refuse = (reason: string) => new Unauthenticated({ message: `Invalid session token: ${reason}` })

/**
 * The claims we use, or why the session is refused. jose has checked the signature, that `exp` and
 * `iat` are there, and `exp` and `nbf` against `nowSeconds`.
 */
const claimsOf = (payload: JWTPayload, maxAge: number, trustedEmailIssuers: ReadonlyArray<string>, nowSeconds: number) => {
  if (typeof payload.sub !== "string" || payload.sub.length === 0) return Effect.fail(refuse("the sub claim is missing"))
  if (payload.iat! > nowSeconds + sessionClockSkewSeconds) return Effect.fail(refuse(`the "iat" claim is in the future`))
  if (payload.exp! - payload.iat! > maxAge) {
    return Effect.fail(refuse(`it lasts longer than SESSION_MAX_AGE allows ("exp" - "iat" > ${maxAge} s)`))
  }
  const email = typeof payload["email"] === "string" ? payload["email"] : null
  for (const [claim, text] of [["sub", payload.sub], ["email", email]] as const) {
    if (text !== null && !isStorableText(text)) return Effect.fail(refuse(`the ${claim} claim holds U+0000 or a lone surrogate`))
  }
  // an address counts as the person's only when the provider says so, as a JSON true: a string,
  // a number, null or no claim at all would let whoever typed the address take its invites; unless
  // the operator vouches for a provider that never sends the claim
  const verified = payload["email_verified"] === true ||
    (payload["email_verified"] === undefined && payload.iss !== undefined && trustedEmailIssuers.includes(payload.iss))
  return Effect.succeed({ subject: payload.sub, email, emailVerified: verified, expiresAt: DateTime.makeUnsafe(payload.exp! * 1000) })
}

/**
 * Session JWTs verified with jose: the algorithm is pinned per key kind (a token signed with
 * another algorithm is rejected, including `none`); `exp` and `iat` are required and the session may
 * last at most `maxAgeSeconds` from `iat`; `exp`, `nbf` and `iat` are checked allowing
 * `sessionClockSkewSeconds` between clocks; issuer and audience are checked when configured.
 */
export const makeSessionVerifier = (options: SessionVerifierOptions) => {
  const maxAge = options.maxAgeSeconds ?? defaultSessionMaxAgeSeconds
  const trustedEmailIssuers = options.trustedEmailIssuers ?? []
  const times = (now: Date) => ({ requiredClaims: ["exp", "iat"], clockTolerance: sessionClockSkewSeconds, currentDate: now })
  const verifyWith: (token: string, now: Date) => Promise<JWTPayload> = options.secret !== undefined
    ? (() => {
      const key = createSecretKey(Buffer.from(Redacted.value(options.secret!), "utf8"))
      return (token, now) =>
        jwtVerify(token, key, { algorithms: ["HS256"], issuer: options.issuer, audience: options.audience, ...times(now) })
          .then((r) => r.payload)
    })()
    : options.jwksUrl !== undefined
    ? (() => {
      const jwksOf = (url: string): JWTVerifyGetKey =>
        createRemoteJWKSet(new URL(url), { ...(options.fetch ? { [customFetch]: options.fetch } : {}) })
      const configured = options.jwksUrl!
      // a JWKS found by discovery is looked up on the first session, again after a failed look-up
      let jwks: Promise<JWTVerifyGetKey> | undefined = typeof configured === "string"
        ? Promise.resolve(jwksOf(configured))
        : undefined
      const keys = () => {
        jwks ??= (configured as () => Promise<string>)().then(jwksOf, (error: unknown) => {
          jwks = undefined
          throw error
        })
        return jwks
      }
      return async (token, now) =>
        (await jwtVerify(token, await keys(), {
          algorithms: ["RS256", "ES256"],
          issuer: options.issuer,
          audience: options.audience,
          ...times(now)
        })).payload
    })()
    : () => Promise.reject(new Error("Sessions are not configured"))

  return SessionVerifier.of({
    verify: (token) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.tryPromise({
          try: () => verifyWith(Redacted.value(token), new Date(now)),
          catch: (cause) => refuse(cause instanceof Error ? cause.message : "verification failed")
        }).pipe(Effect.flatMap((payload) => claimsOf(payload, maxAge, trustedEmailIssuers, Math.floor(now / 1000)))))
  })
}

export const SessionVerifierJose = {
  layer: (options: SessionVerifierOptions) => Layer.succeed(SessionVerifier, makeSessionVerifier(options))
}

export const hasSessionConfig = (options: SessionVerifierOptions): boolean =>
  Option.isSome(Option.fromNullishOr(options.secret ?? options.jwksUrl))
