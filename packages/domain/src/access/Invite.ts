import { DateTime, Duration, Option, Result, Schema } from "effect"
import { Email, InviteId, UserId, WorkspaceId } from "../shared/index.ts"
import { InviteNotPending } from "./WorkspaceErrors.ts"

export const InviteRole = Schema.Literals(["member", "admin"])
export type InviteRole = typeof InviteRole.Type

export const InviteStatus = Schema.Literals(["pending", "accepted", "revoked", "expired"])
export type InviteStatus = typeof InviteStatus.Type

/** How long an invite may wait for its first sign-in before it lapses. */
export const inviteLifetime = Duration.days(7)

export const MailStatus = Schema.Literals(["queued", "sent", "logged", "failed", "skipped"])
export type MailStatus = typeof MailStatus.Type

/** What every invite has, whatever its state. */
const inviteFields = {
  id: InviteId,
  workspace_id: WorkspaceId,
  email: Email,
  role: InviteRole,
  invited_by: Schema.NullOr(UserId),
  redirect_to: Schema.NullOr(Schema.String),
  created_at: Schema.DateTimeUtc,
  expires_at: Schema.DateTimeUtc,
  /** Delivery of the invite mail: queued until sent (or logged, without a mail server), failed after the last attempt, skipped once moot. */
  mail_status: MailStatus,
  mail_attempts: Schema.Int,
  mail_last_error: Schema.NullOr(Schema.String),
  mail_sent_at: Schema.NullOr(Schema.DateTimeUtc)
}

/**
 * Invite lifecycle: Pending -> Accepted | Revoked | Expired, and nothing moves out of the last
 * three. A pending invite whose `expires_at` has passed counts as expired before the expiry job
 * stores it so (`effectiveStatus`); it can then only expire.
 */
export const Invite = Schema.TaggedUnion({
  Pending: inviteFields,
  Accepted: { ...inviteFields, accepted_at: Schema.DateTimeUtc, accepted_by: UserId },
  Revoked: inviteFields,
  Expired: inviteFields
})
export type Invite = typeof Invite.Type
export type PendingInvite = typeof Invite.cases.Pending.Type
export type AcceptedInvite = typeof Invite.cases.Accepted.Type
export type RevokedInvite = typeof Invite.cases.Revoked.Type
export type ExpiredInvite = typeof Invite.cases.Expired.Type

export const expireAt = (createdAt: DateTime.Utc): DateTime.Utc => DateTime.addDuration(createdAt, inviteLifetime)

/** A new pending invite, valid for `inviteLifetime`, its mail queued. */
export const create = (input: {
  readonly id: InviteId
  readonly workspaceId: WorkspaceId
  readonly email: string
  readonly role: InviteRole
  readonly invitedBy: UserId | null
  readonly redirectTo: string | null
  readonly now: DateTime.Utc
}): PendingInvite =>
  Invite.cases.Pending.make({
    id: input.id,
    workspace_id: input.workspaceId,
    email: input.email.trim().toLowerCase(),
    role: input.role,
    invited_by: input.invitedBy,
    redirect_to: input.redirectTo,
    created_at: input.now,
    expires_at: expireAt(input.now),
    mail_status: "queued",
    mail_attempts: 0,
    mail_last_error: null,
    mail_sent_at: null
  })

/**
 * Inviting an email that already has a pending invite refreshes it: it keeps its id, email and
 * creation time and takes the new role, inviter, link and expiry, with its mail queued again.
 */
export const refresh = (pending: PendingInvite, fresh: PendingInvite): PendingInvite =>
  Invite.cases.Pending.make({
    ...fresh,
    id: pending.id,
    email: pending.email,
    created_at: pending.created_at,
    mail_status: "queued",
    mail_attempts: 0,
    mail_last_error: null,
    mail_sent_at: null
  })

/** The stored status, as the API and the database spell it. */
export const statusOf: (invite: Invite) => InviteStatus = Invite.match({
  Pending: () => "pending" as const,
  Accepted: () => "accepted" as const,
  Revoked: () => "revoked" as const,
  Expired: () => "expired" as const
})

const isOverdue = (invite: Invite, now: DateTime.Utc): boolean => !DateTime.isGreaterThan(invite.expires_at, now)

/** The status at `now`: a pending invite past its expiry is expired, whether or not that is stored yet. */
export const effectiveStatus = (invite: Invite, now: DateTime.Utc): InviteStatus =>
  invite._tag === "Pending" && isOverdue(invite, now) ? "expired" : statusOf(invite)

/** Only a pending invite within its lifetime moves. */
const pendingAt = (invite: Invite, now: DateTime.Utc): Result.Result<PendingInvite, InviteNotPending> =>
  invite._tag === "Pending" && !isOverdue(invite, now)
    ? Result.succeed(invite)
    : Result.fail(new InviteNotPending({ invite_id: invite.id, status: effectiveStatus(invite, now) }))

export const accept = (invite: Invite, by: UserId, now: DateTime.Utc): Result.Result<AcceptedInvite, InviteNotPending> =>
  Result.map(pendingAt(invite, now), ({ _tag, ...fields }) =>
    Invite.cases.Accepted.make({ ...fields, accepted_at: now, accepted_by: by }))

export const revoke = (invite: Invite, now: DateTime.Utc): Result.Result<RevokedInvite, InviteNotPending> =>
  Result.map(pendingAt(invite, now), ({ _tag, ...fields }) => Invite.cases.Revoked.make(fields))

/** What the expiry job stores for a pending invite past its expiry; nothing for any other invite. */
export const expire = (invite: Invite, now: DateTime.Utc): Option.Option<ExpiredInvite> => {
  if (invite._tag !== "Pending" || !isOverdue(invite, now)) return Option.none()
  const { _tag, ...fields } = invite
  return Option.some(Invite.cases.Expired.make(fields))
}
