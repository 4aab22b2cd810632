import { DateTime, Effect, Layer, Option, Ref } from "effect"
import type { UserId, WorkspaceId } from "../shared/index.ts"
import { Member, Membership, type Role, User } from "./Workspace.ts"
import { type MemberWorkspace, WorkspaceRepository } from "./WorkspaceRepository.ts"

interface StoredMembership {
  readonly workspaceId: WorkspaceId
  readonly userId: UserId
  readonly role: Role
  readonly joinedAt: DateTime.Utc
}

interface State {
  readonly users: ReadonlyArray<User>
  /** Workspace id to its personal owner (null for a workspace made otherwise). */
  readonly workspaces: ReadonlyMap<WorkspaceId, UserId | null>
  /** Workspace id to its name (as Postgres names a personal workspace: its owner's email at sign-up). */
  readonly names: ReadonlyMap<WorkspaceId, string>
  readonly memberships: ReadonlyArray<StoredMembership>
}

const sameEmail = (a: string | null, b: string) => a !== null && a.toLowerCase() === b.toLowerCase()

/** Postgres orders uuids as their lower-case text: code unit by code unit. */
const byJoined = (a: StoredMembership, b: StoredMembership) =>
  DateTime.toEpochMillis(a.joinedAt) - DateTime.toEpochMillis(b.joinedAt) ||
  (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0)

/** WorkspaceRepository in memory, with the Postgres adapter's keys: subject unique, one membership per pair. */
const layer = Layer.effect(
  WorkspaceRepository,
  Effect.gen(function*() {
    const state = yield* Ref.make<State>({ users: [], workspaces: new Map(), names: new Map(), memberships: [] })

    const member = (users: ReadonlyArray<User>, m: StoredMembership) =>
      new Member({
        user_id: m.userId,
        email: users.find((u) => u.id === m.userId)?.email ?? null,
        role: m.role,
        joined_at: m.joinedAt
      })

    const membersWhere = (workspaceId: WorkspaceId, keep: (m: Member) => boolean) =>
      Effect.map(Ref.get(state), (s) =>
        s.memberships
          .filter((m) => m.workspaceId === workspaceId)
          .toSorted(byJoined)
          .map((m) => member(s.users, m))
          .filter(keep))

    return WorkspaceRepository.of({
      findUserBySubject: (subject) =>
        Effect.map(Ref.get(state), (s) => Option.fromNullishOr(s.users.find((u) => u.subject === subject))),
      createUser: (user, workspaceId, now) =>
        Ref.update(state, (s): State =>
          s.users.some((u) => u.id === user.id || u.subject === user.subject) || s.workspaces.has(workspaceId)
            ? s
            : {
              users: [...s.users, user],
              workspaces: new Map([...s.workspaces, [workspaceId, user.id]]),
              names: new Map([...s.names, [workspaceId, user.email ?? "Personal workspace"]]),
              memberships: [...s.memberships, { workspaceId, userId: user.id, role: "owner", joinedAt: now }]
            }),
      touchUser: (userId, email) =>
        Ref.update(state, (s) => ({
          ...s,
          users: s.users.map((u) => (u.id === userId ? new User({ ...u, email }) : u))
        })),
      findUsers: (ids) => Effect.map(Ref.get(state), (s) => s.users.filter((u) => ids.includes(u.id))),
      memberships: (userId) =>
        Effect.map(Ref.get(state), (s) =>
          s.memberships
            .filter((m) => m.userId === userId)
            .toSorted(byJoined)
            .map((m) =>
              new Membership({
                workspace_id: m.workspaceId,
                user_id: m.userId,
                role: m.role,
                personal: s.workspaces.get(m.workspaceId) === userId,
                joined_at: m.joinedAt
              })
            )),
      workspacesOf: (userId, page) =>
        Effect.map(Ref.get(state), (s) =>
          s.memberships
            .filter((m) => m.userId === userId && (page.after === undefined || m.workspaceId > page.after))
            .toSorted((a, b) => (a.workspaceId < b.workspaceId ? -1 : a.workspaceId > b.workspaceId ? 1 : 0))
            .slice(0, page.limit)
            .map((m): MemberWorkspace => ({
              workspace_id: m.workspaceId,
              name: s.names.get(m.workspaceId) ?? "",
              role: m.role,
              personal: s.workspaces.get(m.workspaceId) === userId,
              joined_at: m.joinedAt
            }))),
      members: (workspaceId) => membersWhere(workspaceId, () => true),
      findMember: (workspaceId, userId) =>
        Effect.map(membersWhere(workspaceId, (m) => m.user_id === userId), (found) => Option.fromNullishOr(found[0])),
      findMemberByEmail: (workspaceId, email) =>
        Effect.map(membersWhere(workspaceId, (m) => sameEmail(m.email, email)), (found) => Option.fromNullishOr(found[0])),
      addMember: (workspaceId, userId, role, now) =>
        Ref.update(state, (s) =>
          s.memberships.some((m) => m.workspaceId === workspaceId && m.userId === userId)
            ? s
            : { ...s, memberships: [...s.memberships, { workspaceId, userId, role, joinedAt: now }] }),
      removeMember: (workspaceId, userId) =>
        Ref.modify(state, (s) => {
          const kept = s.memberships.filter((m) => !(m.workspaceId === workspaceId && m.userId === userId))
          return [kept.length < s.memberships.length, { ...s, memberships: kept }]
        }),
      findWorkspace: (by) =>
        Effect.map(Ref.get(state), (s) => {
          if ("id" in by) return Option.fromNullishOr([...s.workspaces.keys()].find((id) => id === by.id))
          const owners = new Set(s.users.filter((u) => sameEmail(u.email, by.ownerEmail)).map((u) => u.id))
          return Option.fromNullishOr([...s.workspaces].find(([, owner]) => owner !== null && owners.has(owner))?.[0])
        })
    })
  })
)

export const WorkspaceRepositoryMemory = { layer }
