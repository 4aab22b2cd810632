import { assert, describe, layer } from "@effect/vitest"
import { User, WorkspaceRepository } from "@podium/domain/access"
import { UserId } from "@podium/domain/shared"
import { WorkspaceId } from "@podium/domain/shared"
import { DateTime, Effect, type Layer, Option } from "effect"

const t0 = DateTime.makeUnsafe("2026-11-22T10:00:00.000Z")
const at = (hours: number) => DateTime.add(t0, { hours })

/** A signed-up user, with the personal workspace they own since `joined`. */
export const aUser = (joined = t0) =>
  Effect.gen(function*() {
    const id = UserId.make(crypto.randomUUID())
    const user = new User({ id, subject: `contract-${id}`, email: `${id}@Example.com` })
    const workspaceId = WorkspaceId.make(crypto.randomUUID())
    yield* (yield* WorkspaceRepository).createUser(user, workspaceId, joined)
    return { user, workspaceId }
  })

/**
 * The behaviour the use cases rely on, declared once and run against every adapter of
 * `WorkspaceRepository` (STYLE.md 19): `makeLayer` builds a fresh one.
 */
export const workspaceRepositoryContract = (name: string, makeLayer: () => Layer.Layer<WorkspaceRepository, unknown>) =>
  describe(`WorkspaceRepository contract: ${name}`, () => {
    layer(makeLayer(), { timeout: 60_000 })((it) => {
      it.effect("a new user owns a personal workspace; creating the same subject again changes nothing", () =>
        Effect.gen(function*() {
          const workspaces = yield* WorkspaceRepository
          const { user, workspaceId } = yield* aUser()
          yield* workspaces.createUser(new User({ ...user, id: UserId.make(crypto.randomUUID()) }), WorkspaceId.make(crypto.randomUUID()), at(1))
          assert.deepStrictEqual(yield* workspaces.findUserBySubject(user.subject), Option.some(user))
          const memberships = yield* workspaces.memberships(user.id)
          assert.deepStrictEqual(memberships.map((m) => [m.workspace_id, m.role, m.personal]), [[workspaceId, "owner", true]])
          assert.deepStrictEqual(yield* workspaces.findWorkspace({ ownerEmail: user.email!.toUpperCase() }), Option.some(workspaceId))
          assert.deepStrictEqual(yield* workspaces.findWorkspace({ id: workspaceId }), Option.some(workspaceId))
          assert.isTrue(Option.isNone(yield* workspaces.findWorkspace({ id: crypto.randomUUID() })))
        }))

      it.effect("members join once, in order, are found by id or email (any case), and leave", () =>
        Effect.gen(function*() {
          const workspaces = yield* WorkspaceRepository
          const [owner, pat] = [yield* aUser(), yield* aUser()]
          yield* workspaces.addMember(owner.workspaceId, pat.user.id, "admin", at(1))
          yield* workspaces.addMember(owner.workspaceId, pat.user.id, "member", at(2))
          const members = yield* workspaces.members(owner.workspaceId)
          assert.deepStrictEqual(members.map((m) => [m.user_id, m.role]), [[owner.user.id, "owner"], [pat.user.id, "admin"]])
          const memberships = yield* workspaces.memberships(pat.user.id)
          assert.deepStrictEqual(memberships.map((m) => [m.workspace_id, m.personal]), [[pat.workspaceId, true], [owner.workspaceId, false]])
          const byEmail = yield* workspaces.findMemberByEmail(owner.workspaceId, pat.user.email!.toLowerCase())
          assert.deepStrictEqual(byEmail, Option.some(members[1]!))
          yield* workspaces.touchUser(pat.user.id, "pat@example.com", at(3))
          assert.isTrue(Option.isSome(yield* workspaces.findMemberByEmail(owner.workspaceId, "PAT@example.com")))
          assert.isTrue(yield* workspaces.removeMember(owner.workspaceId, pat.user.id))
          assert.isFalse(yield* workspaces.removeMember(owner.workspaceId, pat.user.id))
          assert.isTrue(Option.isNone(yield* workspaces.findMember(owner.workspaceId, pat.user.id)))
        }))

      it.effect("a user's workspaces page by id with their names and the user's role, and only theirs", () =>
        Effect.gen(function*() {
          const workspaces = yield* WorkspaceRepository
          const [pat, a, b, stranger] = [yield* aUser(), yield* aUser(), yield* aUser(), yield* aUser()]
          yield* workspaces.addMember(a.workspaceId, pat.user.id, "admin", at(1))
          yield* workspaces.addMember(b.workspaceId, pat.user.id, "member", at(2))
          const expected = [
            [pat.workspaceId, pat.user.email, "owner", true],
            [a.workspaceId, a.user.email, "admin", false],
            [b.workspaceId, b.user.email, "member", false]
          ].toSorted((x, y) => (x[0]! < y[0]! ? -1 : 1))
          const rows = (page: ReadonlyArray<{ workspace_id: string; name: string; role: string; personal: boolean }>) =>
            page.map((w) => [w.workspace_id, w.name, w.role, w.personal])
          assert.deepStrictEqual(rows(yield* workspaces.workspacesOf(pat.user.id, { after: undefined, limit: 10 })), expected)
          const first = yield* workspaces.workspacesOf(pat.user.id, { after: undefined, limit: 2 })
          assert.deepStrictEqual(rows(first), expected.slice(0, 2))
          const rest = yield* workspaces.workspacesOf(pat.user.id, { after: first[1]!.workspace_id, limit: 2 })
          assert.deepStrictEqual(rows(rest), expected.slice(2))
          assert.deepStrictEqual(rows(yield* workspaces.workspacesOf(stranger.user.id, { after: undefined, limit: 10 })), [
            [stranger.workspaceId, stranger.user.email, "owner", true]
          ])
        }))

      it.effect("users are found by id whether or not they are members; unknown ids are left out", () =>
        Effect.gen(function*() {
          const workspaces = yield* WorkspaceRepository
          const [ada, bob] = [yield* aUser(), yield* aUser()]
          const found = yield* workspaces.findUsers([bob.user.id, UserId.make(crypto.randomUUID()), ada.user.id])
          assert.deepStrictEqual(found.map((u) => u.email).toSorted(), [ada.user.email, bob.user.email].toSorted())
          assert.deepStrictEqual(yield* workspaces.findUsers([]), [])
        }))
    })
  })
