import { Context, type Effect } from "effect"
import type { Invite } from "./Invite.ts"

/**
 * Hands an invite's mail to durable delivery. When `enqueue` succeeds the delivery is stored and
 * survives restarts; enqueueing the same invite version twice delivers once.
 */
export class InviteMailQueue extends Context.Service<InviteMailQueue, {
  readonly enqueue: (invite: Invite) => Effect.Effect<void>
}>()("@podium/domain/access/InviteMailQueue") {}
