import { Context, type DateTime, type Effect, type Redacted } from "effect"
import type { Unauthenticated } from "./AuthErrors.ts"

export interface SessionClaims {
  /** The identity provider's subject: stable per person. */
  readonly subject: string
  readonly email: string | null
  /** True only when the provider says so (`email_verified: true`); until then invites to the email wait. */
  readonly emailVerified: boolean
}

/** A verified session token's claims, and when the token ends (its `exp`). */
export interface VerifiedSession extends SessionClaims {
  readonly expiresAt: DateTime.Utc
}

/** Verifies a signed-in user's session token (a JWT from the identity provider). */
export class SessionVerifier extends Context.Service<SessionVerifier, {
  readonly verify: (token: Redacted.Redacted<string>) => Effect.Effect<VerifiedSession, Unauthenticated>
}>()("@podium/domain/access/SessionVerifier") {}
