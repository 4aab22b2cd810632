import { Context, DateTime, Effect, Layer, Option, Redacted } from "effect"
import { Unauthenticated } from "./AuthErrors.ts"
import { Identity } from "./Identity.ts"
import { Principal } from "./Principal.ts"
import { SessionVerifier } from "./SessionVerifier.ts"
import { TokenSecrets } from "./TokenSecrets.ts"
import { claimsOf, WebSession, WebSessionPrefix, webSessionEnd } from "./WebSession.ts"
import { WebSessionRepository } from "./WebSessionRepository.ts"

/** A session just opened: its secret goes to the browser once (in a cookie), never to storage. */
export interface OpenedWebSession {
  readonly session: WebSession
  readonly secret: Redacted.Redacted<string>
  readonly csrfToken: string
}

/** A live session and who acts by it. */
export interface ActiveWebSession {
  readonly session: WebSession
  readonly principal: Principal
  readonly csrfToken: string
}

const ended = new Unauthenticated({ message: "The web session has ended or is unknown: sign in again" })

/**
 * Web sessions: a browser signs in once with a session token (or OIDC ID token) and from then on
 * presents only an opaque secret, which the server looks up by digest. Opening verifies the token
 * as any session is verified and signs its user in; the session ends at the token's `exp` or at
 * sign-out, whichever is first. Each request by it signs in with the token's claims, as the token
 * itself would (invites to a verified email are accepted). Its CSRF token is a digest of the
 * secret under another label: recomputed on each request, stored nowhere, and not derivable
 * without the secret. Sessions that have ended are removed as they are found and whenever one opens.
 */
export class WebSessions extends Context.Service<WebSessions, {
  readonly open: (credential: Redacted.Redacted<string>) => Effect.Effect<OpenedWebSession, Unauthenticated>
  readonly resolve: (secret: Redacted.Redacted<string>) => Effect.Effect<ActiveWebSession, Unauthenticated>
  /** Ends the session (sign-out); false when it had ended already or never was. */
  readonly close: (secret: Redacted.Redacted<string>) => Effect.Effect<boolean>
}>()("@podium/domain/access/WebSessions") {
  static readonly layer = Layer.effect(
    WebSessions,
    Effect.gen(function*() {
      const repository = yield* WebSessionRepository
      const verifier = yield* SessionVerifier
      const secrets = yield* TokenSecrets
      const identity = yield* Identity

      const csrfTokenOf = (secret: Redacted.Redacted<string>) =>
        secrets.digest(Redacted.make(`csrf:${Redacted.value(secret)}`))

      const open = Effect.fn("WebSessions.open")(function*(credential: Redacted.Redacted<string>) {
        const verified = yield* verifier.verify(credential)
        const now = yield* DateTime.now
        const expiresAt = yield* Effect.fromResult(webSessionEnd(verified, now))
        const { user } = yield* identity.signIn(verified)
        const minted = yield* secrets.mint(WebSessionPrefix)
        const session = new WebSession({
          user_id: user.id,
          subject: verified.subject,
          email: verified.email,
          email_verified: verified.emailVerified,
          created_at: now,
          expires_at: expiresAt
        })
        yield* repository.removeEnded(now)
        yield* repository.insert(session, minted.hash)
        return { session, secret: minted.secret, csrfToken: csrfTokenOf(minted.secret) }
      })

      const resolve = Effect.fn("WebSessions.resolve")(function*(secret: Redacted.Redacted<string>) {
        if (!Redacted.value(secret).startsWith(WebSessionPrefix)) return yield* ended
        const found = yield* repository.findLive(secrets.digest(secret), yield* DateTime.now)
        if (Option.isNone(found)) return yield* ended
        const { memberships, user } = yield* identity.signIn(claimsOf(found.value))
        return {
          session: found.value,
          principal: Principal.SessionPrincipal({ user, memberships, emailVerified: found.value.email_verified }),
          csrfToken: csrfTokenOf(secret)
        }
      })

      const close = Effect.fn("WebSessions.close")(function*(secret: Redacted.Redacted<string>) {
        return yield* repository.remove(secrets.digest(secret))
      })

      return WebSessions.of({ open, resolve, close })
    })
  )
}
