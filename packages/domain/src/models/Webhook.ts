import { DateTime, Duration, Result, Schema } from "effect"
import { InvalidInput, type ModelId } from "../shared/index.ts"
import type { InferenceLog } from "./InferenceLog.ts"

/** A model's `model.inference` webhook: where, whether on, and its signing secret (sealed at rest). */
export interface ModelWebhook {
  readonly model_id: string
  readonly url: string
  readonly enabled: boolean
  /** The `whsec_…` secret, sealed by the SecretCipher. */
  readonly sealed_secret: string
  /** When the secret was made: set with a new URL, kept while the URL stays. */
  readonly secret_created_at: DateTime.Utc
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

/** One signed delivery's answer: a status code, or why there was none. */
export type SendResult =
  | { readonly _tag: "Answered"; readonly status: number }
  | { readonly _tag: "NotSent"; readonly reason: string }

/** A delivery waiting in the outbox: one per stored log of a model whose webhook was on. */
export interface OutboxEntry {
  readonly log_id: string
  readonly model_id: ModelId
  /** Attempts made so far. */
  readonly attempts: number
}

/**
 * A log as its webhook delivers it (the body's `log`), as JSON text: its id, times, messages,
 * traces and metadata, without the delivery's own outcome (`metadata.webhook_delivery`). The
 * outbox reads logs in this form (WebhookOutbox.logsToDeliver) so a delivery costs no re-encoding.
 */
export const deliveredLogJson = (log: InferenceLog): string => {
  const { webhook_delivery: _, ...metadata } = log.metadata
  return JSON.stringify({
    id: log.id,
    timestamp: DateTime.formatIso(log.timestamp),
    input_message: log.input_message,
    output_messages: log.output_messages,
    traces: log.traces,
    metadata,
    created_at: DateTime.formatIso(log.created_at)
  })
}

/**
 * The body of a `model.inference` delivery: the event, when it was sent, the model, and the log
 * (`deliveredLogJson`), put together as text.
 */
export const deliveryBody = (
  deliveredAt: DateTime.Utc,
  model: { readonly id: string; readonly workspace_id: string; readonly name: string },
  logJson: string
): string =>
  `{"event":"model.inference","delivered_at":${JSON.stringify(DateTime.formatIso(deliveredAt))},"model":${
    JSON.stringify({ id: model.id, business_id: model.workspace_id, name: model.name })
  },"log":${logJson}}`

/** One attempt's outcome: stored in the log's metadata; `next` schedules another attempt, null ends the entry. */
export interface DeliveryOutcome {
  readonly log_id: string
  readonly delivery: WebhookDelivery
  readonly next: DateTime.Utc | null
}

/** Attempts per delivery, the first included (about 21 minutes of retries at the default 10 s base). */
export const maxDeliveryAttempts = 8

/**
 * What an attempt comes to: a 2xx answer is delivered; anything else is tried again after
 * `retryBase` doubled per attempt made before, until the `maxDeliveryAttempts`-th, which fails it.
 * `attempts` is the count before this one.
 */
export const deliveryOutcome = (
  entry: Pick<OutboxEntry, "log_id" | "attempts">,
  sent: SendResult,
  now: DateTime.Utc,
  retryBase: Duration.Duration
): DeliveryOutcome => {
  const attempts = entry.attempts + 1
  if (sent._tag === "Answered" && sent.status >= 200 && sent.status < 300) {
    return {
      log_id: entry.log_id,
      delivery: { status: "delivered", attempts, last_status_code: sent.status, last_error: null, delivered_at: DateTime.formatIso(now) },
      next: null
    }
  }
  const failure = {
    attempts,
    last_status_code: sent._tag === "Answered" ? sent.status : null,
    last_error: sent._tag === "Answered" ? `the receiver answered ${sent.status}` : sent.reason,
    delivered_at: null
  }
  return attempts >= maxDeliveryAttempts
    ? { log_id: entry.log_id, delivery: { status: "failed", ...failure }, next: null }
    : {
      log_id: entry.log_id,
      delivery: { status: "pending", ...failure },
      next: DateTime.addDuration(now, Duration.times(retryBase, 2 ** (attempts - 1)))
    }
}

/** An entry that cannot be attempted at all (its log, model or webhook is gone or off): failed at once. */
export const undeliverable = (entry: Pick<OutboxEntry, "log_id" | "attempts">, reason: string): DeliveryOutcome => ({
  log_id: entry.log_id,
  delivery: { status: "failed", attempts: entry.attempts + 1, last_status_code: null, last_error: reason, delivered_at: null },
  next: null
})
