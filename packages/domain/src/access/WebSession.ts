import { DateTime, Result, Schema } from "effect"
import { UserId } from "../shared/index.ts"
import { Unauthenticated } from "./AuthErrors.ts"
import type { SessionClaims, VerifiedSession } from "./SessionVerifier.ts"

/** A web session's secret (the browser's cookie) starts with this. */
export const WebSessionPrefix = "pws_"

/**
 * A signed-in browser's session, kept server-side: the claims of the session token (or OIDC ID
 * token) it was opened with, until that token's `exp`. The browser holds only its secret, in an
 * HttpOnly cookie; the server holds only the secret's digest, so deleting the row ends the session.
 */
export class WebSession extends Schema.Class<WebSession>("WebSession")({
  user_id: UserId,
  subject: Schema.String,
  email: Schema.NullOr(Schema.String),
  email_verified: Schema.Boolean,
  created_at: Schema.DateTimeUtc,
  expires_at: Schema.DateTimeUtc
}) {}

/**
 * When a web session opened at `now` with `verified` ends: at the token's own `exp`, never later.
 * A token already past its `exp` (the verifier allows clock skew around it) opens none.
 */
export const webSessionEnd = (verified: VerifiedSession, now: DateTime.Utc): Result.Result<DateTime.Utc, Unauthenticated> =>
  DateTime.isGreaterThan(verified.expiresAt, now)
    ? Result.succeed(verified.expiresAt)
    : Result.fail(new Unauthenticated({ message: "The session token has expired: sign in again for a new one" }))

/** Whether the session still lasts at `now`. */
export const isWebSessionLive = (session: WebSession, now: DateTime.Utc): boolean => DateTime.isGreaterThan(session.expires_at, now)

/** The claims a request by the session signs in with: those of the token that opened it. */
export const claimsOf = (session: WebSession): SessionClaims => ({
  subject: session.subject,
  email: session.email,
  emailVerified: session.email_verified
})
