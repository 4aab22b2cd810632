import { Context, DateTime, Effect, Layer, Option, type Redacted } from "effect"
import { ApiTokenPrefix, shouldRecordUse, statusAt } from "./ApiToken.ts"
import { Unauthenticated } from "./AuthErrors.ts"
import { Principal } from "./Principal.ts"
import { ApiTokenRepository } from "./ApiTokenRepository.ts"
import { PushTokenRepository } from "./PushTokenRepository.ts"
import { SessionVerifier } from "./SessionVerifier.ts"
import { TokenSecrets } from "./TokenSecrets.ts"
import { Identity } from "./Identity.ts"
import { hotSpan } from "../shared/index.ts"

const rejected = (message: string) => new Unauthenticated({ message })

/** Turns a presented credential into a Principal, or fails with Unauthenticated. */
export class Authentication extends Context.Service<Authentication, {
  readonly apiToken: (secret: Redacted.Redacted<string>) => Effect.Effect<Principal, Unauthenticated>
  readonly session: (jwt: Redacted.Redacted<string>) => Effect.Effect<Principal, Unauthenticated>
  readonly pushToken: (secret: Redacted.Redacted<string>) => Effect.Effect<Principal, Unauthenticated>
}>()("@podium/domain/access/Authentication") {
  /** An API token secret starts with `pod_`; anything else on the bearer header is taken as a session JWT. */
  static readonly isApiTokenSecret = (value: string): boolean => value.startsWith(ApiTokenPrefix)

  static readonly layer = Layer.effect(
    Authentication,
    Effect.gen(function*() {
      const tokens = yield* ApiTokenRepository
      const pushTokens = yield* PushTokenRepository
      const secrets = yield* TokenSecrets
      const sessions = yield* SessionVerifier
      const identity = yield* Identity

      const apiToken = Effect.fnUntraced(function*(secret: Redacted.Redacted<string>) {
        const found = yield* tokens.findBySecretHash(secrets.digest(secret))
        if (Option.isNone(found)) return yield* rejected("Unknown API token")
        const now = yield* DateTime.now
        const status = statusAt(found.value, now)
        if (status !== "active") return yield* rejected(`The API token is ${status}`)
        if (shouldRecordUse(found.value.last_used_at, now)) yield* tokens.touch(found.value.id, now)
        return Principal.ApiTokenPrincipal({ token: found.value })
      }, hotSpan("Authentication.apiToken"))

      const session = Effect.fn("Authentication.session")(function*(jwt: Redacted.Redacted<string>) {
        const claims = yield* sessions.verify(jwt)
        const { user, memberships } = yield* identity.signIn(claims)
        return Principal.SessionPrincipal({ user, memberships, emailVerified: claims.emailVerified })
      })

      const pushToken = Effect.fn("Authentication.pushToken")(function*(secret: Redacted.Redacted<string>) {
        const found = yield* pushTokens.findBySecretHash(secrets.digest(secret))
        if (Option.isNone(found)) return yield* rejected("Unknown push token")
        if (found.value.revoked_at !== null) return yield* rejected("The push token is revoked")
        yield* pushTokens.touch(found.value.id, yield* DateTime.now)
        return Principal.PushTokenPrincipal({
          pushTokenId: found.value.id,
          workspaceId: found.value.workspace_id,
          leaderboardId: found.value.leaderboard_id
        })
      })

      return Authentication.of({ apiToken, session, pushToken })
    })
  )
}

