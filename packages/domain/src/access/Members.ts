import { Context, DateTime, Effect, Layer, Option } from "effect"
import type { Forbidden } from "./AuthErrors.ts"
import {
  InvalidInput,
  NotFound,
  InviteId,
  type UserId,
  type WorkspaceId,
  IdGenerator,
  Links,
} from "../shared/index.ts"
import * as Invites from "./Invite.ts"
import type { Principal } from "./Principal.ts"
import { InviteRepository } from "./InviteRepository.ts"
import { InviteMailQueue } from "./InviteMailQueue.ts"
import { WorkspaceRepository } from "./WorkspaceRepository.ts"
import type { Member } from "./Workspace.ts"
import { AlreadyMember, InviteNotPending, OwnerCannotBeRemoved } from "./WorkspaceErrors.ts"
import { administratorOf } from "./Access.ts"

export interface InviteInput {
  readonly email: string
  readonly role?: Invites.InviteRole | undefined
  readonly business_id?: WorkspaceId | undefined
  readonly redirect_to?: string | undefined
}

export interface RemoveInput {
  readonly business_id: WorkspaceId
  readonly user_id?: UserId | undefined
  readonly invite_id?: InviteId | undefined
}

export interface SentInvite {
  readonly invite: Invites.PendingInvite
  readonly acceptUrl: string
}

export type Removal =
  | { readonly _tag: "MemberRemoved"; readonly workspaceId: WorkspaceId; readonly userId: UserId }
  | { readonly _tag: "InviteRevoked"; readonly invite: Invites.RevokedInvite }

/** Members and invites of a workspace; managed by its owners and admins. */
export class Members extends Context.Service<Members, {
  readonly list: (principal: Principal, businessId: WorkspaceId | undefined) => Effect.Effect<{
    readonly workspaceId: WorkspaceId
    readonly members: ReadonlyArray<Member>
    readonly invites: ReadonlyArray<Invites.PendingInvite>
  }, Forbidden>
  /** Creates or refreshes the pending invite and queues its mail for durable delivery. */
  readonly invite: (principal: Principal, input: InviteInput) => Effect.Effect<SentInvite, Forbidden | AlreadyMember>
  readonly remove: (
    principal: Principal,
    input: RemoveInput
  ) => Effect.Effect<Removal, Forbidden | NotFound | InvalidInput | OwnerCannotBeRemoved | InviteNotPending>
}>()("@podium/domain/access/Members") {
  static readonly layer = Layer.effect(
    Members,
    Effect.gen(function*() {
      const workspaces = yield* WorkspaceRepository
      const invites = yield* InviteRepository
      const ids = yield* IdGenerator
      const mailQueue = yield* InviteMailQueue
      const links = yield* Links

      const list = Effect.fn("Members.list")(function*(principal: Principal, businessId: WorkspaceId | undefined) {
        const { workspace_id } = yield* administratorOf(principal, businessId)
        const now = yield* DateTime.now
        const [members, pending] = yield* Effect.all([workspaces.members(workspace_id), invites.listPending(workspace_id, now)])
        return { workspaceId: workspace_id, members, invites: pending }
      })

      const invite = Effect.fn("Members.invite")(function*(principal: Principal, input: InviteInput) {
        const admin = yield* administratorOf(principal, input.business_id)
        const email = input.email.trim().toLowerCase()
        if (Option.isSome(yield* workspaces.findMemberByEmail(admin.workspace_id, email))) {
          return yield* new AlreadyMember({ email })
        }
        const saved = yield* invites.upsertPending(Invites.create({
          id: yield* ids.make(InviteId),
          workspaceId: admin.workspace_id,
          email,
          role: input.role ?? "member",
          invitedBy: admin.user_id,
          redirectTo: input.redirect_to ?? null,
          now: yield* DateTime.now
        }))
        yield* mailQueue.enqueue(saved)
        return { invite: saved, acceptUrl: links.inviteAcceptUrl(saved) }
      })

      const removeMember = Effect.fnUntraced(function*(workspaceId: WorkspaceId, userId: UserId) {
        const member = yield* workspaces.findMember(workspaceId, userId)
        if (Option.isNone(member)) return yield* new NotFound({ resource: "member", id: userId })
        if (member.value.role === "owner") return yield* new OwnerCannotBeRemoved({ user_id: userId })
        yield* workspaces.removeMember(workspaceId, userId)
        return { _tag: "MemberRemoved", workspaceId, userId } as const
      })

      const revokeInvite = Effect.fnUntraced(function*(workspaceId: WorkspaceId, inviteId: InviteId) {
        const found = yield* invites.find(workspaceId, inviteId)
        if (Option.isNone(found)) return yield* new NotFound({ resource: "invite", id: inviteId })
        const revoked = yield* Effect.fromResult(Invites.revoke(found.value, yield* DateTime.now))
        if (!(yield* invites.settle(revoked))) {
          // Accepted or expired between the read and the write: report what it became.
          const now = yield* invites.find(workspaceId, inviteId)
          return yield* new InviteNotPending({
            invite_id: inviteId,
            status: Option.match(now, { onNone: () => "gone", onSome: Invites.statusOf })
          })
        }
        return { _tag: "InviteRevoked", invite: revoked } as const
      })

      const remove = Effect.fn("Members.remove")(function*(principal: Principal, input: RemoveInput) {
        const admin = yield* administratorOf(principal, input.business_id)
        if ((input.user_id === undefined) === (input.invite_id === undefined)) {
          return yield* new InvalidInput({ message: "Give exactly one of user_id and invite_id", path: [] })
        }
        return input.user_id !== undefined
          ? yield* removeMember(admin.workspace_id, input.user_id)
          : yield* revokeInvite(admin.workspace_id, input.invite_id!)
      })

      return Members.of({ list, invite, remove })
    })
  )
}
