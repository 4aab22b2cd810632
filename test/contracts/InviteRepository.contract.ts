import { assert, describe, layer } from "@effect/vitest"
import {
  accept,
  create,
  Invite,
  type InviteRole,
  InviteRepository,
  revoke,
  statusOf,
  WorkspaceRepository
} from "@podium/domain/access"
import { InviteId } from "@podium/domain/shared"
import type { WorkspaceId } from "@podium/domain/shared"
import { DateTime, Effect, type Layer, Option, Result } from "effect"
import { aUser } from "./WorkspaceRepository.contract.ts"

const t0 = DateTime.makeUnsafe("2026-11-22T10:00:00.000Z")
const at = (hours: number) => DateTime.add(t0, { hours })

const anInvite = (workspaceId: WorkspaceId, fields: {
  readonly email?: string
  readonly role?: InviteRole
  readonly now?: DateTime.Utc
} = {}) =>
  create({
    id: InviteId.make(crypto.randomUUID()),
    workspaceId,
    email: fields.email ?? `${crypto.randomUUID()}@example.com`,
    role: fields.role ?? "member",
    invitedBy: null,
    redirectTo: null,
    now: fields.now ?? t0
  })

const found = (workspaceId: WorkspaceId, id: InviteId) =>
  Effect.flatMap(InviteRepository, (r) => Effect.map(r.find(workspaceId, id), Option.getOrUndefined))

const ids = (invites: ReadonlyArray<Invite>) => invites.map((i) => i.id)

/**
 * The behaviour the use cases rely on, declared once and run against every adapter of
 * `InviteRepository` (STYLE.md 19). Accepting adds a membership, so the layer also brings the
 * `WorkspaceRepository` the adapter adds it through; `makeLayer` builds a fresh pair.
 */
export const inviteRepositoryContract = (
  name: string,
  makeLayer: () => Layer.Layer<InviteRepository | WorkspaceRepository, unknown>
) =>
  describe(`InviteRepository contract: ${name}`, () => {
    layer(makeLayer(), { timeout: 60_000 })((it) => {
      it.effect("stores a new pending invite and finds it in its own workspace only", () =>
        Effect.gen(function*() {
          const invites = yield* InviteRepository
          const [mine, theirs] = [yield* aUser(), yield* aUser()]
          const invite = anInvite(mine.workspaceId)
          assert.deepStrictEqual(yield* invites.upsertPending(invite), invite)
          assert.deepStrictEqual(yield* found(mine.workspaceId, invite.id), invite)
          assert.isUndefined(yield* found(theirs.workspaceId, invite.id))
          assert.deepStrictEqual(ids(yield* invites.listPending(theirs.workspaceId, t0)), [])
        }))

      it.effect("inviting an email again, in any case, refreshes its pending invite; other workspaces keep their own", () =>
        Effect.gen(function*() {
          const invites = yield* InviteRepository
          const [mine, theirs] = [yield* aUser(), yield* aUser()]
          const first = yield* invites.upsertPending(anInvite(mine.workspaceId, { email: "pat@example.com" }))
          yield* invites.recordMail(first.id, { status: "sent", attempts: 1, lastError: null, at: at(1) })
          const again = Invite.cases.Pending.make({
            ...anInvite(mine.workspaceId, { role: "admin", now: at(2) }),
            email: "Pat@Example.com"
          })
          const refreshed = yield* invites.upsertPending(again)
          assert.deepStrictEqual(refreshed, Invite.cases.Pending.make({
            ...again,
            id: first.id,
            email: first.email,
            created_at: first.created_at
          }))
          assert.deepStrictEqual(yield* invites.listPending(mine.workspaceId, at(2)), [refreshed])
          const elsewhere = yield* invites.upsertPending(anInvite(theirs.workspaceId, { email: "pat@example.com" }))
          assert.notStrictEqual(elsewhere.id, first.id)
          assert.deepStrictEqual(ids(yield* invites.listPending(theirs.workspaceId, at(2))), [elsewhere.id])
        }))

      it.effect("lists live pending invites newest first, and finds them by email (any case) in every workspace", () =>
        Effect.gen(function*() {
          const invites = yield* InviteRepository
          const [mine, theirs] = [yield* aUser(), yield* aUser()]
          const email = `${crypto.randomUUID()}@example.com`
          const overdue = anInvite(mine.workspaceId, { now: at(-7 * 24) })
          const older = anInvite(mine.workspaceId, { email, now: at(1) })
          const newer = anInvite(mine.workspaceId, { now: at(2) })
          const revoked = anInvite(mine.workspaceId, { now: at(3) })
          const other = anInvite(theirs.workspaceId, { email, now: at(1) })
          for (const invite of [overdue, older, newer, revoked, other]) yield* invites.upsertPending(invite)
          assert.isTrue(yield* invites.settle(Result.getOrThrow(revoke(revoked, at(3)))))
          assert.deepStrictEqual(ids(yield* invites.listPending(mine.workspaceId, at(4))), [newer.id, older.id])
          const forEmail = yield* invites.pendingForEmail(email.toUpperCase(), at(4))
          assert.deepStrictEqual(ids(forEmail).toSorted(), [older.id, other.id].toSorted())
          assert.deepStrictEqual(ids(yield* invites.pendingForEmail(email, at(1 + 7 * 24))), [])
        }))

      it.effect("accepting stores who and when and adds the membership with the invite's role, once", () =>
        Effect.gen(function*() {
          const invites = yield* InviteRepository
          const workspaces = yield* WorkspaceRepository
          const [owner, invitee] = [yield* aUser(), yield* aUser()]
          const invite = yield* invites.upsertPending(anInvite(owner.workspaceId, { role: "admin" }))
          const accepted = Result.getOrThrow(accept(invite, invitee.user.id, at(1)))
          assert.isTrue(yield* invites.accept(accepted))
          assert.deepStrictEqual(yield* found(owner.workspaceId, invite.id), accepted)
          const member = Option.getOrThrow(yield* workspaces.findMember(owner.workspaceId, invitee.user.id))
          assert.strictEqual(member.role, "admin")
          assert.isTrue(DateTime.Equivalence(member.joined_at, at(1)))
          assert.isFalse(yield* invites.accept(Result.getOrThrow(accept(invite, owner.user.id, at(2)))))
          assert.isFalse(yield* invites.settle(Result.getOrThrow(revoke(invite, at(2)))))
          assert.strictEqual(statusOf((yield* found(owner.workspaceId, invite.id))!), "accepted")
          assert.deepStrictEqual(ids(yield* invites.listPending(owner.workspaceId, at(2))), [])
        }))

      it.effect("accepting as an existing member keeps their role; of two concurrent acceptances one wins", () =>
        Effect.gen(function*() {
          const invites = yield* InviteRepository
          const workspaces = yield* WorkspaceRepository
          const [owner, invitee] = [yield* aUser(), yield* aUser()]
          yield* workspaces.addMember(owner.workspaceId, invitee.user.id, "member", t0)
          const invite = yield* invites.upsertPending(anInvite(owner.workspaceId, { role: "admin" }))
          const accepted = Result.getOrThrow(accept(invite, invitee.user.id, at(1)))
          const wins = yield* Effect.all([invites.accept(accepted), invites.accept(accepted)], { concurrency: 2 })
          assert.deepStrictEqual(wins.toSorted(), [false, true])
          const member = Option.getOrThrow(yield* workspaces.findMember(owner.workspaceId, invitee.user.id))
          assert.strictEqual(member.role, "member")
        }))

      it.effect("revoking moves a pending invite once and keeps the mail progress recorded since it was read", () =>
        Effect.gen(function*() {
          const invites = yield* InviteRepository
          const { workspaceId } = yield* aUser()
          const read = yield* invites.upsertPending(anInvite(workspaceId))
          yield* invites.recordMail(read.id, { status: "sent", attempts: 2, lastError: null, at: at(1) })
          const revoked = Result.getOrThrow(revoke(read, at(2)))
          assert.isTrue(yield* invites.settle(revoked))
          assert.isFalse(yield* invites.settle(revoked))
          assert.deepStrictEqual(yield* found(workspaceId, read.id), Invite.cases.Revoked.make({
            ...revoked,
            mail_status: "sent",
            mail_attempts: 2,
            mail_sent_at: at(1)
          }))
        }))

      it.effect("records mail attempts; the sent time is set by a sent attempt and kept by later ones", () =>
        Effect.gen(function*() {
          const invites = yield* InviteRepository
          const { workspaceId } = yield* aUser()
          const invite = yield* invites.upsertPending(anInvite(workspaceId))
          const mailOf = Effect.map(found(workspaceId, invite.id), (i) =>
            i && [i.mail_status, i.mail_attempts, i.mail_last_error, i.mail_sent_at])
          yield* invites.recordMail(invite.id, { status: "queued", attempts: 1, lastError: "busy", at: at(1) })
          assert.deepStrictEqual(yield* mailOf, ["queued", 1, "busy", null])
          yield* invites.recordMail(invite.id, { status: "sent", attempts: 2, lastError: null, at: at(2) })
          assert.deepStrictEqual(yield* mailOf, ["sent", 2, null, at(2)])
          yield* invites.recordMail(invite.id, { status: "skipped", attempts: 2, lastError: null, at: at(3) })
          assert.deepStrictEqual(yield* mailOf, ["skipped", 2, null, at(2)])
        }))

      it.effect("expiring marks every pending invite past its expiry, and only those, once", () =>
        Effect.gen(function*() {
          const invites = yield* InviteRepository
          const { workspaceId } = yield* aUser()
          // Later than every other test's invites: flush theirs first, the count is then ours alone.
          const now = DateTime.makeUnsafe("2031-01-01T00:00:00.000Z")
          yield* invites.expireOverdue(now)
          const overdue = anInvite(workspaceId, { now: DateTime.subtract(now, { days: 8 }) })
          const live = anInvite(workspaceId, { now })
          const accepted = anInvite(workspaceId, { now: DateTime.subtract(now, { days: 9 }) })
          for (const invite of [overdue, live, accepted]) yield* invites.upsertPending(invite)
          const { user } = yield* aUser()
          yield* invites.accept(Result.getOrThrow(accept(accepted, user.id, DateTime.subtract(now, { days: 8 }))))
          assert.strictEqual(yield* invites.expireOverdue(now), 1)
          assert.strictEqual(yield* invites.expireOverdue(now), 0)
          const statuses = yield* Effect.forEach([overdue, live, accepted], (i) =>
            Effect.map(found(workspaceId, i.id), (f) => f && statusOf(f)))
          assert.deepStrictEqual(statuses, ["expired", "pending", "accepted"])
        }))
    })
  })
