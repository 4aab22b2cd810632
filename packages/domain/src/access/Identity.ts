import { Context, DateTime, Effect, Layer, Option, Result } from "effect"
import { UserId, WorkspaceId, IdGenerator } from "../shared/index.ts"
import * as Invite from "./Invite.ts"
import { InviteRepository } from "./InviteRepository.ts"
import type { SessionClaims } from "./SessionVerifier.ts"
import { WorkspaceRepository } from "./WorkspaceRepository.ts"
import { type Membership, User } from "./Workspace.ts"

export interface SignedIn {
  readonly user: User
  readonly memberships: ReadonlyArray<Membership>
}

/**
 * Signing in: the first authenticated request of a subject creates the user and their personal
 * workspace (as owner); every request with a verified email accepts that email's pending invites.
 */
export class Identity extends Context.Service<Identity, {
  readonly signIn: (claims: SessionClaims) => Effect.Effect<SignedIn>
}>()("@podium/domain/access/Identity") {
  static readonly layer = Layer.effect(
    Identity,
    Effect.gen(function*() {
      const workspaces = yield* WorkspaceRepository
      const invites = yield* InviteRepository
      const ids = yield* IdGenerator

      const findOrCreateUser = Effect.fnUntraced(function*(claims: SessionClaims, now: DateTime.Utc) {
        const existing = yield* workspaces.findUserBySubject(claims.subject)
        if (Option.isSome(existing)) {
          if (existing.value.email !== claims.email) {
            yield* workspaces.touchUser(existing.value.id, claims.email, now)
          }
          return new User({ ...existing.value, email: claims.email })
        }
        const user = new User({ id: yield* ids.make(UserId), subject: claims.subject, email: claims.email })
        yield* workspaces.createUser(user, yield* ids.make(WorkspaceId), now)
        return user
      })

      const acceptInvites = Effect.fnUntraced(function*(user: User, email: string, now: DateTime.Utc) {
        for (const pending of yield* invites.pendingForEmail(email, now)) {
          const accepted = Invite.accept(pending, user.id, now)
          if (Result.isSuccess(accepted)) yield* invites.accept(accepted.success)
        }
      })

      const signIn = Effect.fn("Identity.signIn")(function*(claims: SessionClaims) {
        const now = yield* DateTime.now
        const user = yield* findOrCreateUser(claims, now)
        if (claims.email !== null && claims.emailVerified) {
          yield* acceptInvites(user, claims.email, now)
        }
        return { user, memberships: yield* workspaces.memberships(user.id) }
      })

      return Identity.of({ signIn })
    })
  )
}
