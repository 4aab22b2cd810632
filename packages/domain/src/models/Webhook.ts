import { Context, type DateTime, type Effect, type Option, Result, Schema } from "effect"
import { InvalidInput } from "../shared/index.ts"

/** A model's `model.inference` webhook: where, whether on, and its signing secret (sealed at rest). */
export interface ModelWebhook {
  readonly model_id: string
  readonly url: string
  readonly enabled: boolean
  /** The `whsec_…` secret, sealed by the SecretCipher. */
  readonly sealed_secret: string
  readonly updated_at: DateTime.Utc
}

/** The outcome of a delivery, recorded in the log's `metadata.webhook_delivery`. */
export const WebhookDelivery = Schema.Struct({
  status: Schema.Literals(["pending", "delivered", "failed"]),
  attempts: Schema.Int,
  last_status_code: Schema.NullOr(Schema.Int),
  last_error: Schema.NullOr(Schema.String),
  delivered_at: Schema.NullOr(Schema.String)
})
export type WebhookDelivery = typeof WebhookDelivery.Type

/**
 * Where a webhook may point: `https` without credentials in the URL; with `allowPrivate` (tests
 * and local development, ALLOW_PRIVATE_NETWORK_TARGETS) plain `http` too. Whether the address is
 * public is checked when connecting (after DNS), by the sender. Empty means "none".
 */
export const webhookTarget = (
  input: string | null | undefined,
  allowPrivate: boolean
): Result.Result<string | null, InvalidInput> => {
  if (input === null || input === undefined || input.trim() === "") return Result.succeed(null)
  const invalid = (message: string) => Result.fail(new InvalidInput({ message, path: ["webhook_url"] }))
  let url: URL
  try {
    url = new URL(input.trim())
  } catch {
    return invalid("webhook_url must be an absolute URL")
  }
  if (url.username !== "" || url.password !== "") return invalid("webhook_url must not carry credentials")
  if (url.protocol !== "https:" && !(allowPrivate && url.protocol === "http:")) return invalid("webhook_url must be an https URL")
  if (url.hash !== "") return invalid("webhook_url must not have a fragment")
  return Result.succeed(url.toString())
}

/** The webhooks of models, and the deliveries waiting in the outbox. */
export class WebhookRepository extends Context.Service<WebhookRepository, {
  readonly find: (modelId: string) => Effect.Effect<Option.Option<ModelWebhook>>
  /** Sets (or, with url null, clears and disables) the model's webhook. */
  readonly save: (webhook: ModelWebhook | { readonly model_id: string; readonly url: null; readonly updated_at: DateTime.Utc }) => Effect.Effect<void>
}>()("@podium/domain/models/WebhookRepository") {}

/** One signed delivery's answer: a status code, or why there was none. */
export type SendResult =
  | { readonly _tag: "Answered"; readonly status: number }
  | { readonly _tag: "NotSent"; readonly reason: string }

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

/** A delivery waiting in the outbox: one per stored log of a model whose webhook was on. */
export interface OutboxEntry {
  readonly log_id: string
  readonly model_id: string
  /** Attempts made so far. */
  readonly attempts: number
}

/**
 * The durable outbox of `model.inference` deliveries. Rows are written with their log (see
 * InferenceLogWriter). `claim` leases due rows (each to one claimer at a time across instances, for
 * `lease`); `record` stores an attempt's outcome in the log's `metadata.webhook_delivery` and, in
 * the same transaction, either schedules the next attempt (`next`) or removes the row (null: done,
 * delivered or given up).
 */
export class WebhookOutbox extends Context.Service<WebhookOutbox, {
  readonly claim: (now: DateTime.Utc, limit: number, lease: { readonly seconds: number }) => Effect.Effect<ReadonlyArray<OutboxEntry>>
  readonly record: (logId: string, delivery: WebhookDelivery, next: DateTime.Utc | null) => Effect.Effect<void>
}>()("@podium/domain/models/WebhookOutbox") {}
