import { DateTime, Effect, Layer, Option, Schema } from "effect"
import { Activity, DurableClock, Workflow, WorkflowEngine } from "effect/workflow"
import type { InviteId, WorkspaceId } from "@podium/domain/Ids"
import * as Delivery from "@podium/domain/InviteMail"
import { InviteMailQueue } from "@podium/domain/ports/InviteMailQueue"
import { InviteRepository } from "@podium/domain/ports/InviteRepository"
import { Links } from "@podium/domain/ports/Links"
import { Mailer } from "@podium/domain/ports/Mailer"

/**
 * One invite mail, delivered durably: each attempt is an activity and each wait a durable sleep,
 * so a restart (or another instance) carries on where the last one stopped. Keyed by the invite and
 * its expiry: refreshing an invite sends a new mail, enqueueing the same version again does not.
 */
export const InviteMailWorkflow = Workflow.make("InviteMail", {
  payload: { invite_id: Schema.String, workspace_id: Schema.String, expires_at: Schema.String },
  idempotencyKey: ({ expires_at, invite_id }) => `${invite_id}@${expires_at}`
})

const Outcome = Schema.Literals(["sent", "retry", "failed", "skipped"])

const attempt = (payload: typeof InviteMailWorkflow.payloadSchema.Type, number: number) =>
  Activity.make({
    name: `send-${number}`,
    success: Outcome,
    execute: Effect.gen(function*() {
      const invites = yield* InviteRepository
      const now = yield* DateTime.now
      const invite = yield* invites.find(payload.workspace_id as WorkspaceId, payload.invite_id as InviteId)
      if (Option.isNone(invite) || DateTime.formatIso(invite.value.expires_at) !== payload.expires_at) {
        return "skipped" as const // refreshed or gone: a newer delivery owns it
      }
      if (invite.value.mail_status === "sent") return "sent" as const
      if (!Delivery.worthSending(invite.value, now)) {
        yield* invites.recordMail(invite.value.id, {
          status: "skipped",
          attempts: invite.value.mail_attempts,
          lastError: invite.value.mail_last_error,
          at: now
        })
        return "skipped" as const
      }
      const links = yield* Links
      const mailer = yield* Mailer
      const outcome = yield* mailer.send(Delivery.compose(invite.value, links.inviteAcceptUrl(invite.value))).pipe(
        Effect.as({ _tag: "Sent" } as const),
        Effect.catchTag("MailFailed", (e) => Effect.succeed({ _tag: "Failed", reason: e.reason } as const))
      )
      const next = Delivery.afterAttempt(number, outcome)
      yield* invites.recordMail(invite.value.id, {
        status: next.status,
        attempts: number,
        lastError: next.lastError,
        at: yield* DateTime.now
      })
      if (outcome._tag === "Failed") {
        yield* Effect.logWarning("invite mail not sent").pipe(
          Effect.annotateLogs({ invite_id: invite.value.id, attempt: number, reason: outcome.reason })
        )
      }
      return next.status === "queued" ? "retry" as const : next.status
    })
  })

export const InviteMailLive = InviteMailWorkflow.toLayer(Effect.fnUntraced(function*(payload) {
  for (let number = 1; number <= Delivery.maxAttempts; number++) {
    if ((yield* attempt(payload, number)) !== "retry") return
    yield* DurableClock.sleep({ name: `backoff-${number}`, duration: Delivery.backoff(number), inMemoryThreshold: 0 })
  }
}))

/** Enqueues through the workflow engine: the execution is stored before `enqueue` returns. */
export const InviteMailQueueLive = Layer.effect(
  InviteMailQueue,
  Effect.gen(function*() {
    const engine = yield* WorkflowEngine.WorkflowEngine
    return InviteMailQueue.of({
      enqueue: (invite) =>
        InviteMailWorkflow.execute({
          invite_id: invite.id,
          workspace_id: invite.workspace_id,
          expires_at: DateTime.formatIso(invite.expires_at)
        }, { discard: true }).pipe(
          Effect.asVoid,
          Effect.provideService(WorkflowEngine.WorkflowEngine, engine),
          Effect.withSpan("InviteMailQueue.enqueue")
        )
    })
  })
)
