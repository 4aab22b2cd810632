import { Context, DateTime, Duration, Effect, Layer, Option, Redacted } from "effect"
import type { Principal } from "../access/index.ts"
import { InvalidInput, type NotFound, SecretCipher } from "../shared/index.ts"
import { InferenceLogReader } from "./InferenceLog.ts"
import { ModelRepository } from "./ModelRepository.ts"
import { Models } from "./Models.ts"
import { type WebhookDelivery, WebhookOutbox, WebhookRepository, WebhookSender, webhookTarget } from "./Webhook.ts"

/** ALLOW_PRIVATE_NETWORK_TARGETS: webhooks may point at loopback and plain http (tests, local development). */
export const AllowPrivateWebhooks = Context.Reference<boolean>("@podium/domain/models/AllowPrivateWebhooks", {
  defaultValue: () => false
})
/** The wait before the second attempt; each later one waits twice as long (WEBHOOK_RETRY_BASE_MS). */
export const WebhookRetryBase = Context.Reference<Duration.Duration>("@podium/domain/models/WebhookRetryBase", {
  defaultValue: () => Duration.seconds(10)
})
/** Attempts per delivery, the first included (about 21 minutes of retries at the default base). */
export const maxDeliveryAttempts = 8

export interface WebhookConfig {
  readonly webhook_url: string | null
  readonly enabled: boolean
  /** The signing secret, shown once: when a URL is set anew. */
  readonly secret: string | null
}

/**
 * A model's `model.inference` webhook, and the delivery of its outbox. A delivery is signed per
 * Standard Webhooks (the log id is the `webhook-id`, the same on every attempt, so receivers can drop
 * repeats); a non-2xx answer or no answer is tried again with exponential backoff (across restarts:
 * the outbox is in Postgres) up to `maxDeliveryAttempts`; the outcome lands in the log's
 * `metadata.webhook_delivery`. Nothing here touches the inference response.
 */
export class ModelWebhooks extends Context.Service<ModelWebhooks, {
  readonly configure: (
    principal: Principal,
    modelId: string,
    input: { readonly webhook_url?: string | null | undefined; readonly enabled?: boolean | undefined }
  ) => Effect.Effect<WebhookConfig, NotFound | InvalidInput>
  /** One pass over the due deliveries; answers how many were attempted. */
  readonly deliverDue: Effect.Effect<number>
}>()("@podium/domain/models/ModelWebhooks") {
  static readonly layer = Layer.effect(
    ModelWebhooks,
    Effect.gen(function*() {
      const models = yield* Models
      const modelRepository = yield* ModelRepository
      const webhooks = yield* WebhookRepository
      const outbox = yield* WebhookOutbox
      const logs = yield* InferenceLogReader
      const sender = yield* WebhookSender
      const cipher = yield* SecretCipher
      const allowPrivate = yield* AllowPrivateWebhooks
      const retryBase = yield* WebhookRetryBase

      const configure = Effect.fn("ModelWebhooks.configure")(function*(
        principal: Principal,
        modelId: string,
        input: { readonly webhook_url?: string | null | undefined; readonly enabled?: boolean | undefined }
      ) {
        const model = yield* models.visible(principal, modelId)
        const existing = yield* webhooks.find(model.id)
        const now = yield* DateTime.now
        // no webhook_url: the one set stays (enabled may change); empty or null clears and disables it
        const url = input.webhook_url === undefined
          ? Option.match(existing, { onNone: () => null, onSome: (w) => w.url })
          : yield* Effect.fromResult(webhookTarget(input.webhook_url, allowPrivate))
        if (url === null) {
          if (input.webhook_url === undefined && input.enabled === true) {
            return yield* new InvalidInput({ message: "Set webhook_url to turn the webhook on", path: ["webhook_url"] })
          }
          yield* webhooks.save({ model_id: model.id, url: null, updated_at: now })
          return { webhook_url: null, enabled: false, secret: null }
        }
        // the same URL keeps its secret; a new one gets a new secret, shown this once
        const kept = Option.filter(existing, (w) => w.url === url)
        const secret = Option.isSome(kept) ? null : yield* sender.newSecret
        const enabled = input.enabled ?? Option.match(kept, { onNone: () => true, onSome: (w) => w.enabled })
        const sealed = Option.isSome(kept) ? kept.value.sealed_secret : yield* cipher.seal(Redacted.make(secret!))
        yield* webhooks.save({ model_id: model.id, url, enabled, sealed_secret: sealed, updated_at: now })
        return { webhook_url: url, enabled, secret }
      })

      const deliverOne = Effect.fnUntraced(function*(entry: { readonly log_id: string; readonly model_id: string; readonly attempts: number }) {
        const now = yield* DateTime.now
        const attempts = entry.attempts + 1
        const give = (delivery: Omit<WebhookDelivery, "attempts">, next: DateTime.Utc | null) =>
          outbox.record(entry.log_id, { ...delivery, attempts }, next)
        const [log, webhook, model] = yield* Effect.all([
          logs.find(entry.log_id),
          webhooks.find(entry.model_id),
          modelRepository.find(entry.model_id)
        ])
        if (Option.isNone(log) || Option.isNone(model)) {
          return yield* give({ status: "failed", last_status_code: null, last_error: "the model or its log is gone", delivered_at: null }, null)
        }
        if (Option.isNone(webhook) || !webhook.value.enabled) {
          return yield* give({ status: "failed", last_status_code: null, last_error: "the webhook was turned off", delivered_at: null }, null)
        }
        const { webhook_delivery: _, ...metadata } = log.value.metadata
        const body = JSON.stringify({
          event: "model.inference",
          delivered_at: DateTime.formatIso(now),
          model: { id: model.value.id, business_id: model.value.workspace_id, name: model.value.name },
          log: {
            id: log.value.id,
            timestamp: DateTime.formatIso(log.value.timestamp),
            input_message: log.value.input_message,
            output_messages: log.value.output_messages,
            traces: log.value.traces,
            metadata,
            created_at: DateTime.formatIso(log.value.created_at)
          }
        })
        const secret = yield* cipher.open(webhook.value.sealed_secret)
        const sent = yield* sender.send({ url: webhook.value.url, secret: Redacted.value(secret), messageId: log.value.id, timestamp: now, body })
        if (sent._tag === "Answered" && sent.status >= 200 && sent.status < 300) {
          return yield* give({ status: "delivered", last_status_code: sent.status, last_error: null, delivered_at: DateTime.formatIso(now) }, null)
        }
        const failure = {
          last_status_code: sent._tag === "Answered" ? sent.status : null,
          last_error: sent._tag === "Answered" ? `the receiver answered ${sent.status}` : sent.reason,
          delivered_at: null
        }
        if (attempts >= maxDeliveryAttempts) return yield* give({ status: "failed", ...failure }, null)
        const wait = Duration.times(retryBase, 2 ** (attempts - 1))
        return yield* give({ status: "pending", ...failure }, DateTime.addDuration(now, wait))
      })

      const deliverDue = Effect.gen(function*() {
        const due = yield* outbox.claim(yield* DateTime.now, 20, { seconds: 60 })
        // one receiver's trouble never holds the others: each delivery is on its own
        yield* Effect.forEach(due, (entry) =>
          deliverOne(entry).pipe(
            Effect.catchCause((cause) => Effect.logWarning("webhook delivery not recorded", cause).pipe(Effect.annotateLogs({ log_id: entry.log_id })))
          ), { concurrency: 4, discard: true })
        return due.length
      }).pipe(Effect.withSpan("ModelWebhooks.deliverDue"))

      return ModelWebhooks.of({ configure, deliverDue })
    })
  )
}
