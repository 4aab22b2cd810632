import { Context, type DateTime, type Effect } from "effect"
import type { SendResult } from "./Webhook.ts"

/**
 * Sends a webhook per Standard Webhooks: `webhook-id`, `webhook-timestamp` (unix seconds) and
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}" keyed by the secret's
 * bytes>`; no redirects followed; the connected address must be public unless private targets
 * are allowed.
 */
export class WebhookSender extends Context.Service<WebhookSender, {
  readonly send: (input: {
    readonly url: string
    readonly secret: string
    readonly messageId: string
    readonly timestamp: DateTime.Utc
    readonly body: string
  }) => Effect.Effect<SendResult>
  /** A new `whsec_` secret (24 random bytes, base64). */
  readonly newSecret: Effect.Effect<string>
}>()("@podium/domain/models/WebhookSender") {}
