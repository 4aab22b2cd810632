import { Effect, Layer, Option, Redacted } from "effect"
import { createRemoteJWKSet, customFetch, type JWTPayload, jwtVerify, type JWTVerifyGetKey } from "jose"
import { createSecretKey } from "node:crypto"
import { Unauthenticated, SessionVerifier } from "@podium/domain/access"

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
}

const claimsOf = (payload: JWTPayload) => {
  const email = typeof payload["email"] === "string" ? payload["email"] : null
  return {
    subject: payload.sub!,
    email,
    emailVerified: payload["email_verified"] !== false
  }
}

/**
 * Session JWTs verified with jose: the algorithm is pinned per key kind (a token signed with
 * another algorithm is rejected, including `none`), and `exp`/`nbf`, issuer and audience are checked.
 */
export const makeSessionVerifier = (options: SessionVerifierOptions) => {
  const verifyWith: (token: string) => Promise<JWTPayload> = options.secret !== undefined
    ? (() => {
      const key = createSecretKey(Buffer.from(Redacted.value(options.secret!), "utf8"))
      return (token) =>
        jwtVerify(token, key, { algorithms: ["HS256"], issuer: options.issuer, audience: options.audience })
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
      return async (token) =>
        (await jwtVerify(token, await keys(), {
          algorithms: ["RS256", "ES256"],
          issuer: options.issuer,
          audience: options.audience
        })).payload
    })()
    : () => Promise.reject(new Error("Sessions are not configured"))

  return SessionVerifier.of({
    verify: (token) =>
      Effect.tryPromise({
        try: () => verifyWith(Redacted.value(token)),
        catch: (cause) =>
          new Unauthenticated({
            message: `Invalid session token: ${cause instanceof Error ? cause.message : "verification failed"}`
          })
      }).pipe(
        Effect.filterOrFail(
          (payload) => typeof payload.sub === "string" && payload.sub.length > 0,
          () => new Unauthenticated({ message: "Invalid session token: the sub claim is missing" })
        ),
        Effect.map(claimsOf)
      )
  })
}

export const SessionVerifierJose = {
  layer: (options: SessionVerifierOptions) => Layer.succeed(SessionVerifier, makeSessionVerifier(options))
}

export const hasSessionConfig = (options: SessionVerifierOptions): boolean =>
  Option.isSome(Option.fromNullishOr(options.secret ?? options.jwksUrl))
