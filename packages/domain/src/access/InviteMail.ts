import { DateTime, Duration, Effect, Option } from "effect"
import { type InviteId, Links, type WorkspaceId } from "../shared/index.ts"
import { effectiveStatus, type Invite, type MailStatus } from "./Invite.ts"
import { InviteRepository } from "./InviteRepository.ts"
import { type Delivered, type Mail, Mailer } from "./Mailer.ts"

/**
 * Delivery policy for invite mails: up to `maxAttempts` tries, waiting 2 s, 4 s, 8 s, ... (at most
 * 10 minutes) between them. Delivery is at least once: a crash between sending and recording the
 * attempt sends the mail again.
 */
export const maxAttempts = 8

export const backoff = (attempt: number): Duration.Duration =>
  Duration.min(Duration.seconds(2 ** attempt), Duration.minutes(10))

/** Whether the mail has left (or, without a mail server, was logged): it is not tried again. */
const delivered = (status: MailStatus): status is Delivered => status === "sent" || status === "logged"

/** A mail is worth sending only while the invite can still be accepted. */
export const worthSending = (invite: Invite, now: DateTime.Utc): boolean =>
  effectiveStatus(invite, now) === "pending" && !delivered(invite.mail_status)

/** What an attempt leaves on the invite. */
export const afterAttempt = (
  attempt: number,
  outcome: { readonly _tag: "Delivered"; readonly status: Delivered } | { readonly _tag: "Failed"; readonly reason: string }
): { readonly status: MailStatus; readonly lastError: string | null } =>
  outcome._tag === "Delivered"
    ? { status: outcome.status, lastError: null }
    : { status: attempt >= maxAttempts ? "failed" : "queued", lastError: outcome.reason }

export const compose = (invite: Invite, acceptUrl: string): Mail => ({
  to: invite.email,
  subject: "You are invited to a Podium workspace",
  text: `You have been invited to join a Podium workspace as ${invite.role}.\n\n` +
    `Sign in with this email address to accept: ${acceptUrl}\n\n` +
    `The invite expires at ${DateTime.formatIso(invite.expires_at)}.`
})

/** Which invite version a delivery is for: a refreshed invite (new expiry) gets its own delivery. */
export interface Delivery {
  readonly workspace_id: WorkspaceId
  readonly invite_id: InviteId
  /** The invite's `expires_at` when the delivery was enqueued, ISO 8601. */
  readonly expires_at: string
}

export type AttemptResult = Delivered | "retry" | "failed" | "skipped"

/**
 * Attempt `number` (from 1) of a delivery: skips an invite that was refreshed, removed, already
 * sent or no longer worth sending; otherwise sends and records the attempt on the invite.
 * `retry` asks the caller to wait `backoff(number)` and try again.
 */
export const attempt = Effect.fnUntraced(function*(delivery: Delivery, number: number) {
  const invites = yield* InviteRepository
  const now = yield* DateTime.now
  const found = yield* invites.find(delivery.workspace_id, delivery.invite_id)
  if (Option.isNone(found) || DateTime.formatIso(found.value.expires_at) !== delivery.expires_at) {
    return "skipped" as const // refreshed or gone: a newer delivery owns it
  }
  const invite = found.value
  if (delivered(invite.mail_status)) return invite.mail_status
  if (!worthSending(invite, now)) {
    yield* invites.recordMail(invite.id, {
      status: "skipped",
      attempts: invite.mail_attempts,
      lastError: invite.mail_last_error,
      at: now
    })
    return "skipped" as const
  }
  const links = yield* Links
  const mailer = yield* Mailer
  const outcome = yield* mailer.send(compose(invite, links.inviteAcceptUrl(invite))).pipe(
    Effect.map((status) => ({ _tag: "Delivered", status }) as const),
    Effect.catchTag("MailFailed", (e) => Effect.succeed({ _tag: "Failed", reason: e.reason } as const))
  )
  const next = afterAttempt(number, outcome)
  yield* invites.recordMail(invite.id, {
    status: next.status,
    attempts: number,
    lastError: next.lastError,
    at: yield* DateTime.now
  })
  if (outcome._tag === "Failed") {
    yield* Effect.logWarning("invite mail not sent").pipe(
      Effect.annotateLogs({ invite_id: invite.id, attempt: number, reason: outcome.reason })
    )
  }
  return next.status === "queued" ? "retry" as const : next.status
}) as (delivery: Delivery, number: number) => Effect.Effect<AttemptResult, never, InviteRepository | Links | Mailer>
