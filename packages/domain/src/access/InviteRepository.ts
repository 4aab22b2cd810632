import { Context, type DateTime, type Effect, type Option } from "effect"
import type { InviteId, WorkspaceId } from "../shared/index.ts"
import type { AcceptedInvite, ExpiredInvite, Invite, MailStatus, PendingInvite, RevokedInvite } from "./Invite.ts"

/**
 * Invites. At most one pending invite per workspace and email, in any case (the database enforces
 * it); every write out of pending is conditional on the stored invite still being pending.
 */
export class InviteRepository extends Context.Service<InviteRepository, {
  /** Inserts a new pending invite, or `refresh`es the pending one for that workspace and email. */
  readonly upsertPending: (invite: PendingInvite) => Effect.Effect<PendingInvite>
  readonly find: (workspaceId: WorkspaceId, id: InviteId) => Effect.Effect<Option.Option<Invite>>
  /** Pending invites not yet past their expiry, newest first. */
  readonly listPending: (workspaceId: WorkspaceId, now: DateTime.Utc) => Effect.Effect<ReadonlyArray<PendingInvite>>
  /** Pending invites not yet past their expiry for this email (any case), in every workspace. */
  readonly pendingForEmail: (email: string, now: DateTime.Utc) => Effect.Effect<ReadonlyArray<PendingInvite>>
  /** Stores the acceptance and adds the membership (an existing one keeps its role) at once; false if it was no longer pending. */
  readonly accept: (invite: AcceptedInvite) => Effect.Effect<boolean>
  /** Stores a transition out of pending that adds no member; false if it was no longer pending. */
  readonly settle: (invite: RevokedInvite | ExpiredInvite) => Effect.Effect<boolean>
  /** Records one delivery attempt of the invite mail; `at` becomes `mail_sent_at` when it was sent. */
  readonly recordMail: (
    id: InviteId,
    attempt: { readonly status: MailStatus; readonly attempts: number; readonly lastError: string | null; readonly at: DateTime.Utc }
  ) => Effect.Effect<void>
  /** Marks every pending invite whose expiry has passed as expired; returns how many. */
  readonly expireOverdue: (now: DateTime.Utc) => Effect.Effect<number>
}>()("@podium/domain/access/InviteRepository") {}
