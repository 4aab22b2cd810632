import { DateTime, Duration, Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { IdGenerator, InviteId, Links, type WorkspaceId } from "../shared/index.ts"
import { Identity } from "./Identity.ts"
import { type Invite, inviteLifetime, statusOf } from "./Invite.ts"
import { InviteMailQueue } from "./InviteMailQueue.ts"
import { InviteRepository } from "./InviteRepository.ts"
import { InviteRepositoryMemory } from "./InviteRepositoryMemory.ts"
import { Members } from "./Members.ts"
import { Principal } from "./Principal.ts"
import { WorkspaceRepositoryMemory } from "./WorkspaceRepositoryMemory.ts"

// Inviting, refreshing, accepting (by signing in) and revoking, over the memory repositories with a
// test clock; the mail queue records what it is handed.

const t0 = Date.parse("2026-11-22T10:00:00.000Z")

const run = <A, E>(
  body: (enqueued: ReadonlyArray<Invite>) => Effect.Effect<A, E, Members | Identity | InviteRepository | TestClock.TestClock>
) => {
  const enqueued: Array<Invite> = []
  const queue = Layer.succeed(InviteMailQueue, InviteMailQueue.of({ enqueue: (invite) => Effect.sync(() => enqueued.push(invite)) }))
  const ids = Layer.succeed(IdGenerator, IdGenerator.fromUuids({
    next: Effect.sync(() => crypto.randomUUID()),
    nextMany: (count) => Effect.sync(() => Array.from({ length: count }, () => crypto.randomUUID()))
  }))
  const links = Layer.succeed(Links, Links.of({ inviteAcceptUrl: (i) => `https://podium.test/?invite_id=${i.id}`, tracesUrl: () => "", datasetPushUrl: () => "", modelVersionInferenceUrl: () => "" }))
  const repositories = InviteRepositoryMemory.layer.pipe(Layer.provideMerge(WorkspaceRepositoryMemory.layer))
  const layer = Layer.mergeAll(Members.layer, Identity.layer).pipe(
    Layer.provideMerge(Layer.mergeAll(repositories, ids, queue, links)),
    Layer.provideMerge(TestClock.layer())
  )
  return Effect.runPromise(Effect.provide(Effect.andThen(TestClock.setTime(t0), body(enqueued)), layer))
}

/** Signs in as `subject`: the first time makes the user and their workspace, and accepts their invites. */
const signIn = (subject: string, email: string, emailVerified = true) =>
  Effect.gen(function*() {
    const { memberships, user } = yield* (yield* Identity).signIn({ subject, email, emailVerified })
    return Principal.SessionPrincipal({ user, memberships, emailVerified })
  })

/** The owner of a fresh workspace, and its id. */
const owner = Effect.gen(function*() {
  const { memberships, user } = yield* (yield* Identity).signIn({ subject: "owner", email: "owner@example.com", emailVerified: true })
  return { principal: Principal.SessionPrincipal({ user, memberships, emailVerified: true }), workspaceId: memberships[0]!.workspace_id }
})

const invite = (principal: Principal, email: string, role?: "admin" | "member") =>
  Effect.flatMap(Members, (members) => members.invite(principal, { email, role }))

const revoke = (principal: Principal, workspaceId: WorkspaceId, inviteId: InviteId) =>
  Effect.flatMap(Members, (members) => members.remove(principal, { business_id: workspaceId, invite_id: inviteId }))

const pendingIds = (principal: Principal) =>
  Effect.flatMap(Members, (members) => Effect.map(members.list(principal, undefined), (l) => l.invites.map((i) => i.id)))

describe("Members", () => {
  it("an admin invites an email: pending for a week, its mail queued, its link handed back", () =>
    run((enqueued) =>
      Effect.gen(function*() {
        const { principal } = yield* owner
        const sent = yield* invite(principal, "  Pat@Example.com ")
        expect(sent.invite).toMatchObject({ _tag: "Pending", email: "pat@example.com", role: "member", mail_status: "queued" })
        expect(sent.invite.expires_at).toEqual(DateTime.addDuration(DateTime.makeUnsafe(t0), inviteLifetime))
        expect(sent.acceptUrl).toBe(`https://podium.test/?invite_id=${sent.invite.id}`)
        expect(enqueued).toEqual([sent.invite])
        expect(yield* pendingIds(principal)).toEqual([sent.invite.id])
      })))

  it("inviting the email again refreshes the same invite with the new role and expiry, and queues its mail again", () =>
    run((enqueued) =>
      Effect.gen(function*() {
        const { principal } = yield* owner
        const first = yield* invite(principal, "pat@example.com")
        yield* TestClock.adjust(Duration.days(3))
        const again = yield* invite(principal, "PAT@example.com", "admin")
        expect(again.invite.id).toBe(first.invite.id)
        expect(again.invite.role).toBe("admin")
        expect(again.invite.expires_at).toEqual(DateTime.addDuration(DateTime.add(DateTime.makeUnsafe(t0), { days: 3 }), inviteLifetime))
        expect(enqueued.map((i) => i.expires_at)).toEqual([first.invite.expires_at, again.invite.expires_at])
        expect(yield* pendingIds(principal)).toEqual([first.invite.id])
      })))

  it("signing in with the invited, verified email accepts: a member with the invite's role, the invite no longer pending", () =>
    run(() =>
      Effect.gen(function*() {
        const { principal, workspaceId } = yield* owner
        const sent = yield* invite(principal, "pat@example.com", "admin")
        const unverified = yield* signIn("pat", "pat@example.com", false)
        expect(unverified._tag === "SessionPrincipal" && unverified.memberships.length).toBe(1)
        const pat = yield* signIn("pat", "pat@example.com")
        expect(pat._tag === "SessionPrincipal" && pat.memberships.map((m) => [m.workspace_id, m.role])).toContainEqual([workspaceId, "admin"])
        const stored = Option.getOrThrow(yield* (yield* InviteRepository).find(workspaceId, sent.invite.id))
        expect(statusOf(stored)).toBe("accepted")
        expect(yield* pendingIds(principal)).toEqual([])
        const again = yield* Effect.flip(invite(principal, "pat@example.com"))
        expect(again).toMatchObject({ _tag: "AlreadyMember", email: "pat@example.com" })
      })))

  it("an invite past its week is neither listed nor accepted", () =>
    run(() =>
      Effect.gen(function*() {
        const { principal, workspaceId } = yield* owner
        yield* invite(principal, "pat@example.com")
        yield* TestClock.adjust(inviteLifetime)
        expect(yield* pendingIds(principal)).toEqual([])
        const pat = yield* signIn("pat", "pat@example.com")
        expect(pat._tag === "SessionPrincipal" && pat.memberships.map((m) => m.workspace_id)).not.toContain(workspaceId)
      })))

  it("revoking moves a pending invite once; a revoked, expired or unknown one is refused", () =>
    run(() =>
      Effect.gen(function*() {
        const { principal, workspaceId } = yield* owner
        const sent = yield* invite(principal, "pat@example.com")
        const removal = yield* revoke(principal, workspaceId, sent.invite.id)
        expect(removal._tag === "InviteRevoked" && statusOf(removal.invite)).toBe("revoked")
        expect(yield* Effect.flip(revoke(principal, workspaceId, sent.invite.id)))
          .toMatchObject({ _tag: "InviteNotPending", status: "revoked" })
        const lapsing = yield* invite(principal, "sam@example.com")
        yield* TestClock.adjust(inviteLifetime)
        expect(yield* Effect.flip(revoke(principal, workspaceId, lapsing.invite.id)))
          .toMatchObject({ _tag: "InviteNotPending", status: "expired" })
        expect(yield* Effect.flip(revoke(principal, workspaceId, InviteId.make(crypto.randomUUID()))))
          .toMatchObject({ _tag: "NotFound", resource: "invite" })
      })))

  it("only owners and admins of the workspace invite", () =>
    run(() =>
      Effect.gen(function*() {
        const { principal, workspaceId } = yield* owner
        yield* invite(principal, "pat@example.com")
        const pat = yield* signIn("pat", "pat@example.com")
        const refused = yield* Effect.flip(
          Effect.flatMap(Members, (m) => m.invite(pat, { email: "sam@example.com", business_id: workspaceId }))
        )
        expect(refused._tag).toBe("Forbidden")
      })))
})
