import { DateTime, Duration, Result, Schema } from "effect"
import { Email, InviteId, UserId, WorkspaceId } from "../shared/index.ts"
import { InviteNotPending } from "./WorkspaceErrors.ts"

export const InviteRole = Schema.Literals(["member", "admin"])
export type InviteRole = typeof InviteRole.Type

export const InviteStatus = Schema.Literals(["pending", "accepted", "revoked", "expired"])
export type InviteStatus = typeof InviteStatus.Type

/** How long an invite may wait for its first sign-in before it lapses. */
export const inviteLifetime = Duration.days(7)

export const MailStatus = Schema.Literals(["queued", "sent", "failed", "skipped"])
export type MailStatus = typeof MailStatus.Type

export class Invite extends Schema.Class<Invite>("Invite")({
  id: InviteId,
  workspace_id: WorkspaceId,
  email: Email,
  role: InviteRole,
  status: InviteStatus,
  invited_by: Schema.NullOr(UserId),
  redirect_to: Schema.NullOr(Schema.String),
  created_at: Schema.DateTimeUtc,
  expires_at: Schema.DateTimeUtc,
  accepted_at: Schema.NullOr(Schema.DateTimeUtc),
  accepted_by: Schema.NullOr(UserId),
  /** Delivery of the invite mail: queued until sent, failed after the last attempt, skipped once moot. */
  mail_status: MailStatus,
  mail_attempts: Schema.Int,
  mail_last_error: Schema.NullOr(Schema.String),
  mail_sent_at: Schema.NullOr(Schema.DateTimeUtc)
}) {}

/** A new pending invite, valid for `inviteLifetime`, its mail queued. */
export const create = (input: {
  readonly id: InviteId
  readonly workspaceId: WorkspaceId
  readonly email: string
  readonly role: InviteRole
  readonly invitedBy: UserId | null
  readonly redirectTo: string | null
  readonly now: DateTime.Utc
}): Invite =>
  new Invite({
    id: input.id,
    workspace_id: input.workspaceId,
    email: input.email.trim().toLowerCase(),
    role: input.role,
    status: "pending",
    invited_by: input.invitedBy,
    redirect_to: input.redirectTo,
    created_at: input.now,
    expires_at: expireAt(input.now),
    accepted_at: null,
    accepted_by: null,
    mail_status: "queued",
    mail_attempts: 0,
    mail_last_error: null,
    mail_sent_at: null
  })

/**
 * Invite lifecycle: pending -> accepted | revoked | expired. Only a pending invite moves,
 * and a pending invite whose expiry has passed can only expire.
 */
export const effectiveStatus = (invite: Invite, now: DateTime.Utc): InviteStatus =>
  invite.status === "pending" && !DateTime.isGreaterThan(invite.expires_at, now) ? "expired" : invite.status

export const accept = (invite: Invite, by: UserId, now: DateTime.Utc): Result.Result<Invite, InviteNotPending> =>
  effectiveStatus(invite, now) === "pending"
    ? Result.succeed(new Invite({ ...invite, status: "accepted", accepted_at: now, accepted_by: by }))
    : Result.fail(new InviteNotPending({ invite_id: invite.id, status: effectiveStatus(invite, now) }))

export const revoke = (invite: Invite, now: DateTime.Utc): Result.Result<Invite, InviteNotPending> =>
  effectiveStatus(invite, now) === "pending"
    ? Result.succeed(new Invite({ ...invite, status: "revoked" }))
    : Result.fail(new InviteNotPending({ invite_id: invite.id, status: effectiveStatus(invite, now) }))

export const expireAt = (createdAt: DateTime.Utc): DateTime.Utc => DateTime.addDuration(createdAt, inviteLifetime)
