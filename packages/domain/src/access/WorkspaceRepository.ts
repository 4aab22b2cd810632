import { Context, type DateTime, type Effect, type Option } from "effect"
import type { UserId, WorkspaceId } from "../shared/index.ts"
import type { Member, Membership, Role, User } from "./Workspace.ts"

/** A workspace as one of its members sees it: its name and the member's place in it. */
export interface MemberWorkspace {
  readonly workspace_id: WorkspaceId
  readonly name: string
  readonly role: Role
  readonly personal: boolean
  readonly joined_at: DateTime.Utc
}

/** Users, workspaces and memberships. Every user has exactly one personal workspace they own. */
export class WorkspaceRepository extends Context.Service<WorkspaceRepository, {
  readonly findUserBySubject: (subject: string) => Effect.Effect<Option.Option<User>>
  /** Creates the user, their personal workspace and their owner membership, atomically. */
  readonly createUser: (
    user: User,
    personalWorkspaceId: WorkspaceId,
    now: DateTime.Utc
  ) => Effect.Effect<void>
  readonly touchUser: (userId: UserId, email: string | null, now: DateTime.Utc) => Effect.Effect<void>
  /** The users with these ids, members or not (unknown ids are left out; any order). */
  readonly findUsers: (ids: ReadonlyArray<UserId>) => Effect.Effect<ReadonlyArray<User>>
  readonly memberships: (userId: UserId) => Effect.Effect<ReadonlyArray<Membership>>
  /** The workspaces the user belongs to, by workspace id (as Postgres orders uuids), after `after`; at most `limit`. */
  readonly workspacesOf: (
    userId: UserId,
    page: { readonly after: WorkspaceId | undefined; readonly limit: number }
  ) => Effect.Effect<ReadonlyArray<MemberWorkspace>>
  readonly members: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<Member>>
  readonly findMember: (workspaceId: WorkspaceId, userId: UserId) => Effect.Effect<Option.Option<Member>>
  readonly findMemberByEmail: (workspaceId: WorkspaceId, email: string) => Effect.Effect<Option.Option<Member>>
  /** Adds a member; an existing membership keeps its role. */
  readonly addMember: (workspaceId: WorkspaceId, userId: UserId, role: Role, now: DateTime.Utc) => Effect.Effect<void>
  readonly removeMember: (workspaceId: WorkspaceId, userId: UserId) => Effect.Effect<boolean>
  /** A workspace by its id, or the personal workspace of the user with this email (any case). */
  readonly findWorkspace: (
    by: { readonly id: string } | { readonly ownerEmail: string }
  ) => Effect.Effect<Option.Option<WorkspaceId>>
}>()("@podium/domain/access/WorkspaceRepository") {}
