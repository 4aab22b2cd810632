import { Context, type DateTime, type Effect } from "effect"
import type { SendResult } from "./Webhook.ts"

/** One signed delivery: where, with which secret, and what. */
export interface WebhookMessage {
  readonly url: string
  readonly secret: string
  readonly messageId: string
  readonly timestamp: DateTime.Utc
  readonly body: string
}

/**
 * Sends a webhook per Standard Webhooks: `webhook-id`, `webhook-timestamp` (unix seconds) and
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}" keyed by the secret's
 * bytes>`; no redirects followed; the connected address must be public unless private targets
 * are allowed. Each send is bounded by the sender's time-out and never fails: no answer is a
 * `NotSent` result.
 */
export class WebhookSender extends Context.Service<WebhookSender, {
  readonly send: (message: WebhookMessage) => Effect.Effect<SendResult>
  /** Sends every message at once (the caller bounds how many), each on its own: results in the same order. */
  readonly sendAll: (messages: ReadonlyArray<WebhookMessage>) => Effect.Effect<ReadonlyArray<SendResult>>
  /** A new `whsec_` secret (24 random bytes, base64). */
  readonly newSecret: Effect.Effect<string>
}>()("@podium/domain/models/WebhookSender") {}
