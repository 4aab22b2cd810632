import { DateTime, Duration } from "effect"
import { effectiveStatus, type Invite, type MailStatus } from "./Invite.ts"
import type { Mail } from "./ports/Mailer.ts"

/**
 * Delivery policy for invite mails: up to `maxAttempts` tries, waiting 2 s, 4 s, 8 s, ... (at most
 * 10 minutes) between them. Delivery is at least once: a crash between sending and recording the
 * attempt sends the mail again.
 */
export const maxAttempts = 8

export const backoff = (attempt: number): Duration.Duration =>
  Duration.min(Duration.seconds(2 ** attempt), Duration.minutes(10))

/** A mail is worth sending only while the invite can still be accepted. */
export const worthSending = (invite: Invite, now: DateTime.Utc): boolean =>
  effectiveStatus(invite, now) === "pending" && invite.mail_status !== "sent"

/** What an attempt leaves on the invite. */
export const afterAttempt = (
  attempt: number,
  outcome: { readonly _tag: "Sent" } | { readonly _tag: "Failed"; readonly reason: string }
): { readonly status: MailStatus; readonly lastError: string | null } =>
  outcome._tag === "Sent"
    ? { status: "sent", lastError: null }
    : { status: attempt >= maxAttempts ? "failed" : "queued", lastError: outcome.reason }

export const compose = (invite: Invite, acceptUrl: string): Mail => ({
  to: invite.email,
  subject: "You are invited to a Podium workspace",
  text: `You have been invited to join a Podium workspace as ${invite.role}.\n\n` +
    `Sign in with this email address to accept: ${acceptUrl}\n\n` +
    `The invite expires at ${DateTime.formatIso(invite.expires_at)}.`
})
