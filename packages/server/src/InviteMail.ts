import { DateTime, Effect, Layer, Schema } from "effect"
import { Activity, DurableClock, Workflow } from "effect/workflow"
import { InviteMail, InviteMailQueue } from "@podium/domain/access"
import { workflows } from "./Steps.ts"

/**
 * One invite mail, delivered durably: each attempt is an activity and each wait a durable sleep,
 * so a restart (or another instance) carries on where the last one stopped. Keyed by the invite and
 * its expiry: refreshing an invite sends a new mail, enqueueing the same version again does not.
 */
export const InviteMailWorkflow = Workflow.make("InviteMail", {
  payload: { invite_id: Schema.String, workspace_id: Schema.String, expires_at: Schema.String },
  idempotencyKey: ({ expires_at, invite_id }) => `${invite_id}@${expires_at}`
})

const attempt = (delivery: typeof InviteMailWorkflow.payloadSchema.Type, number: number) =>
  Activity.make({
    name: `send-${number}`,
    success: Schema.Literals(["sent", "logged", "retry", "failed", "skipped"]),
    execute: InviteMail.attempt(delivery as InviteMail.Delivery, number)
  })

export const layerInviteMailWorkflow = InviteMailWorkflow.toLayer(Effect.fnUntraced(function*(payload) {
  for (let number = 1; number <= InviteMail.maxAttempts; number++) {
    if ((yield* attempt(payload, number)) !== "retry") return
    yield* DurableClock.sleep({ name: `backoff-${number}`, duration: InviteMail.backoff(number), inMemoryThreshold: 0 })
  }
}))

/** Enqueues through the workflow engine: the execution is stored before `enqueue` returns. */
export const layerInviteMailQueue = Layer.effect(
  InviteMailQueue,
  Effect.map(workflows, ({ enqueue }) =>
    InviteMailQueue.of({
      enqueue: (invite) =>
        enqueue(InviteMailWorkflow, {
          invite_id: invite.id,
          workspace_id: invite.workspace_id,
          expires_at: DateTime.formatIso(invite.expires_at)
        }, "InviteMailQueue.enqueue")
    }))
)
