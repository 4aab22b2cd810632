import { DateTime, Effect, Layer, Option, SynchronizedRef } from "effect"
import {
  type AcceptedInvite,
  type ExpiredInvite,
  expire,
  type Invite,
  type PendingInvite,
  refresh,
  type RevokedInvite
} from "./Invite.ts"
import { InviteRepository } from "./InviteRepository.ts"
import { WorkspaceRepository } from "./WorkspaceRepository.ts"

const isLive = (invite: Invite, now: DateTime.Utc): invite is PendingInvite =>
  invite._tag === "Pending" && DateTime.isGreaterThan(invite.expires_at, now)

/** Newest first, then by id descending, as the Postgres adapter lists them. */
const newestFirst = (a: Invite, b: Invite) =>
  DateTime.toEpochMillis(b.created_at) - DateTime.toEpochMillis(a.created_at) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)

/**
 * A move out of pending changes the state and nothing else, as the conditional UPDATE does: the
 * stored invite's other fields (its mail progress, say) win over those of the copy that was read.
 */
const settled = (stored: PendingInvite, next: AcceptedInvite | RevokedInvite | ExpiredInvite): Invite => {
  const { _tag, ...fields } = stored
  return { ...next, ...fields }
}

/**
 * InviteRepository in memory, with the Postgres adapter's semantics. Accepting adds the membership
 * through the WorkspaceRepository it is given, under the same lock as the acceptance.
 */
const layer = Layer.effect(
  InviteRepository,
  Effect.gen(function*() {
    const workspaces = yield* WorkspaceRepository
    const state = yield* SynchronizedRef.make<ReadonlyArray<Invite>>([])

    /** Replaces the stored invite `id` if it is still pending; true if it was. */
    const moveOut = (id: string, next: (stored: PendingInvite) => Invite) =>
      SynchronizedRef.modify(state, (invites) => {
        const stored = invites.find((i) => i.id === id)
        return stored?._tag === "Pending"
          ? [true, invites.map((i) => (i === stored ? next(stored) : i))]
          : [false, invites]
      })

    const pendingWhere = (now: DateTime.Utc, keep: (invite: PendingInvite) => boolean) =>
      Effect.map(SynchronizedRef.get(state), (invites) =>
        invites.filter((i): i is PendingInvite => isLive(i, now) && keep(i)).toSorted(newestFirst))

    return InviteRepository.of({
      upsertPending: (invite) =>
        SynchronizedRef.modify(state, (invites) => {
          const current = invites.find((i): i is PendingInvite =>
            i._tag === "Pending" && i.workspace_id === invite.workspace_id &&
            i.email.toLowerCase() === invite.email.toLowerCase()
          )
          if (current === undefined) return [invite, [...invites, invite]]
          const refreshed = refresh(current, invite)
          return [refreshed, invites.map((i) => (i === current ? refreshed : i))]
        }),
      find: (workspaceId, id) =>
        Effect.map(SynchronizedRef.get(state), (invites) =>
          Option.fromNullishOr(invites.find((i) => i.id === id && i.workspace_id === workspaceId))),
      listPending: (workspaceId, now) => pendingWhere(now, (i) => i.workspace_id === workspaceId),
      pendingForEmail: (email, now) => pendingWhere(now, (i) => i.email.toLowerCase() === email.toLowerCase()),
      accept: (invite) =>
        SynchronizedRef.modifyEffect(state, (invites) => {
          const stored = invites.find((i) => i.id === invite.id)
          if (stored?._tag !== "Pending") return Effect.succeed([false, invites] as const)
          return Effect.as(
            workspaces.addMember(invite.workspace_id, invite.accepted_by, invite.role, invite.accepted_at),
            [true, invites.map((i) => (i === stored ? settled(stored, invite) : i))] as const
          )
        }),
      settle: (invite) => moveOut(invite.id, (stored) => settled(stored, invite)),
      recordMail: (id, attempt) =>
        SynchronizedRef.update(state, (invites) =>
          invites.map((i) =>
            i.id === id
              ? {
                ...i,
                mail_status: attempt.status,
                mail_attempts: attempt.attempts,
                mail_last_error: attempt.lastError,
                mail_sent_at: attempt.status === "sent" ? attempt.at : i.mail_sent_at
              }
              : i
          )),
      expireOverdue: (now) =>
        SynchronizedRef.modify(state, (invites) => {
          const next = invites.map((i) => Option.getOrElse(expire(i, now), () => i))
          return [next.filter((i, n) => i !== invites[n]).length, next]
        })
    })
  })
)

export const InviteRepositoryMemory = { layer }
