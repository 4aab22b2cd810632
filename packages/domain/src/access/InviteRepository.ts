import { Context, type DateTime, type Effect, type Option } from "effect"
import type { InviteId, UserId, WorkspaceId } from "../shared/index.ts"
import type { Invite, MailStatus } from "./Invite.ts"
import type { Role } from "./Workspace.ts"

/** Invites. At most one pending invite per workspace and email (the database enforces it). */
export class InviteRepository extends Context.Service<InviteRepository, {
  /** Inserts a new pending invite, or refreshes the role, expiry and link of the pending one for that email. */
  readonly upsertPending: (invite: Invite) => Effect.Effect<Invite>
  readonly find: (workspaceId: WorkspaceId, id: InviteId) => Effect.Effect<Option.Option<Invite>>
  readonly listPending: (workspaceId: WorkspaceId, now: DateTime.Utc) => Effect.Effect<ReadonlyArray<Invite>>
  readonly pendingForEmail: (email: string, now: DateTime.Utc) => Effect.Effect<ReadonlyArray<Invite>>
  /** Marks the invite accepted and adds the membership in one transaction; false if it was no longer pending. */
  readonly accept: (invite: Invite, userId: UserId, role: Role) => Effect.Effect<boolean>
  /** Stores a transition out of pending; false if it was no longer pending. */
  readonly settle: (invite: Invite) => Effect.Effect<boolean>
  /** Records one delivery attempt of the invite mail. */
  readonly recordMail: (
    id: InviteId,
    attempt: { readonly status: MailStatus; readonly attempts: number; readonly lastError: string | null; readonly at: DateTime.Utc }
  ) => Effect.Effect<void>
  /** Marks every pending invite whose expiry has passed as expired; returns how many. */
  readonly expireOverdue: (now: DateTime.Utc) => Effect.Effect<number>
}>()("@podium/domain/access/InviteRepository") {}
