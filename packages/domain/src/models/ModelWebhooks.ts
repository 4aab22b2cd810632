import { Context, DateTime, Duration, Effect, Layer, Metric, Option, Redacted } from "effect"
import type { Principal } from "../access/index.ts"
import { InvalidInput, type ModelId, NotFound, SecretCipher } from "../shared/index.ts"
import type { Model } from "./Model.ts"
import { ModelRepository } from "./ModelRepository.ts"
import { Models } from "./Models.ts"
import { deliveryBody, type DeliveryOutcome, deliveryOutcome, type OutboxEntry, undeliverable, webhookTarget } from "./Webhook.ts"
import { WebhookOutbox } from "./WebhookOutbox.ts"
import { WebhookRepository } from "./WebhookRepository.ts"
import { WebhookSender } from "./WebhookSender.ts"

/** ALLOW_PRIVATE_NETWORK_TARGETS: webhooks may point at loopback and plain http (tests, local development). */
export const AllowPrivateWebhooks = Context.Reference<boolean>("@podium/domain/models/AllowPrivateWebhooks", {
  defaultValue: () => false
})
/** The wait before the second attempt; each later one waits twice as long (WEBHOOK_RETRY_BASE_MS). */
export const WebhookRetryBase = Context.Reference<Duration.Duration>("@podium/domain/models/WebhookRetryBase", {
  defaultValue: () => Duration.seconds(10)
})
/** Deliveries claimed per pass; the next pass starts at once when a pass was full. */
export const deliveryBatch = 100
/** Deliveries of a pass under way at once. */
const deliveryConcurrency = 16

/** Where a model's deliveries go in a pass, with the opened secret. */
interface Target {
  readonly model: Model
  readonly url: string
  readonly secret: string
}

export interface WebhookConfig {
  readonly webhook_url: string | null
  readonly enabled: boolean
  /** The signing secret, shown once: when a URL is set anew. */
  readonly secret: string | null
}

/** A model's webhook as it may be read back: never its secret, only when the secret was made. */
export interface WebhookSettings {
  readonly webhook_url: string
  readonly enabled: boolean
  readonly secret_created_at: DateTime.Utc
  readonly updated_at: DateTime.Utc
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
    modelId: ModelId,
    input: {
      readonly webhook_url?: string | null | undefined
      readonly enabled?: boolean | undefined
      readonly rotate_secret?: boolean | undefined
    }
  ) => Effect.Effect<WebhookConfig, NotFound | InvalidInput>
  /** The model's webhook without its secret; NotFound (resource `webhook`) when none is set. */
  readonly get: (principal: Principal, modelId: ModelId) => Effect.Effect<WebhookSettings, NotFound>
  /** One pass over up to `deliveryBatch` due deliveries; answers how many were claimed. */
  readonly deliverDue: Effect.Effect<number>
}>()("@podium/domain/models/ModelWebhooks") {
  static readonly layer = Layer.effect(
    ModelWebhooks,
    Effect.gen(function*() {
      const models = yield* Models
      const modelRepository = yield* ModelRepository
      const webhooks = yield* WebhookRepository
      const outbox = yield* WebhookOutbox
      const sender = yield* WebhookSender
      const cipher = yield* SecretCipher
      const allowPrivate = yield* AllowPrivateWebhooks
      const retryBase = yield* WebhookRetryBase
      // attempts by what came of them (`retrying`: failed, tried again later), in the context's metric registry
      const metricsContext = yield* Effect.context<never>()
      const attempted = (outcome: string) =>
        Metric.counter("podium_webhook_deliveries_total", {
          description: "Webhook delivery attempts by outcome (delivered, retrying, failed)",
          attributes: { outcome },
          incremental: true
        })
      const deliveries = { delivered: attempted("delivered"), pending: attempted("retrying"), failed: attempted("failed") }
      for (const counter of Object.values(deliveries)) counter.updateUnsafe(0, metricsContext) // shown from the start, at 0

      const configure = Effect.fn("ModelWebhooks.configure")(function*(
        principal: Principal,
        modelId: ModelId,
        input: {
      readonly webhook_url?: string | null | undefined
      readonly enabled?: boolean | undefined
      readonly rotate_secret?: boolean | undefined
    }
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
          if (input.rotate_secret === true) {
            return yield* new InvalidInput({ message: "There is no webhook secret to rotate: set webhook_url", path: ["rotate_secret"] })
          }
          yield* webhooks.save({ model_id: model.id, url: null, updated_at: now })
          return { webhook_url: null, enabled: false, secret: null }
        }
        // the same URL keeps its secret unless asked to rotate it; a new one gets a new secret, shown this once
        const sameUrl = Option.filter(existing, (w) => w.url === url)
        const kept = Option.filter(sameUrl, () => input.rotate_secret !== true)
        const secret = Option.isSome(kept) ? null : yield* sender.newSecret
        const enabled = input.enabled ?? Option.match(sameUrl, { onNone: () => true, onSome: (w) => w.enabled })
        const sealed = Option.isSome(kept) ? kept.value.sealed_secret : yield* cipher.seal(Redacted.make(secret!))
        const secretCreatedAt = Option.isSome(kept) ? kept.value.secret_created_at : now
        yield* webhooks.save({ model_id: model.id, url, enabled, sealed_secret: sealed, secret_created_at: secretCreatedAt, updated_at: now })
        return { webhook_url: url, enabled, secret }
      })

      const get = Effect.fn("ModelWebhooks.get")(function*(principal: Principal, modelId: ModelId) {
        const model = yield* models.visible(principal, modelId)
        const found = yield* webhooks.find(model.id)
        if (Option.isNone(found)) return yield* new NotFound({ resource: "webhook", id: model.id })
        const { enabled, secret_created_at, updated_at, url } = found.value
        return { webhook_url: url, enabled, secret_created_at, updated_at }
      })

      /** Where a model's deliveries go this pass, with the opened secret; or why they cannot go. */
      const targetOf = (modelId: ModelId): Effect.Effect<Target | string> =>
        Effect.gen(function*() {
          const [webhook, model] = yield* Effect.all([webhooks.find(modelId), modelRepository.find(modelId)])
          if (Option.isNone(model)) return "the model or its log is gone"
          if (Option.isNone(webhook) || !webhook.value.enabled) return "the webhook was turned off"
          const secret = yield* cipher.open(webhook.value.sealed_secret)
          return { model: model.value, url: webhook.value.url, secret: Redacted.value(secret) }
        })

      /** The outcomes in one write, or, if that fails, one by one: one outcome the store refuses never holds the rest. */
      const record = (outcomes: ReadonlyArray<DeliveryOutcome>) =>
        outbox.record(outcomes).pipe(
          Effect.catchDefect(() =>
            Effect.forEach(outcomes, (outcome) =>
              outbox.record([outcome]).pipe(
                Effect.catchCause((cause) =>
                  Effect.logWarning("webhook delivery not recorded", cause).pipe(Effect.annotateLogs({ log_id: outcome.log_id }))
                )
              ), { discard: true })
          )
        )

      const deliverDue = Effect.gen(function*() {
        const due = yield* outbox.claim(yield* DateTime.now, deliveryBatch, { seconds: 60 })
        if (due.length === 0) return 0
        const found = yield* outbox.logsToDeliver(due.map((entry) => entry.log_id))
        const modelIds = [...new Set(due.map((entry) => entry.model_id))]
        const targets = new Map(yield* Effect.forEach(modelIds, (modelId) =>
          targetOf(modelId).pipe(
            Effect.map(Option.some),
            Effect.catchCause((cause) =>
              Effect.as(Effect.logWarning("webhook target unreadable", cause).pipe(Effect.annotateLogs({ model_id: modelId })), Option.none())
            ),
            Effect.map((target) => [modelId, target] as const)
          ), { concurrency: 4 }))
        const outcomes: Array<DeliveryOutcome> = []
        const sending: Array<{ readonly entry: OutboxEntry; readonly log: string; readonly target: Target }> = []
        for (const entry of due) {
          const log = found.get(entry.log_id)
          const target = targets.get(entry.model_id) ?? Option.none()
          // a target that could not be read is tried again once the lease ends
          if (Option.isNone(target)) continue
          if (log === undefined) outcomes.push(undeliverable(entry, "the model or its log is gone"))
          else if (typeof target.value === "string") outcomes.push(undeliverable(entry, target.value))
          else sending.push({ entry, log, target: target.value })
        }
        // `deliveryConcurrency` at a time, signed with the time their group is sent at; a group waits
        // for its slowest (at most the sender's time-out), but one receiver's answer or silence
        // decides no other delivery's outcome
        for (let start = 0; start < sending.length; start += deliveryConcurrency) {
          const group = sending.slice(start, start + deliveryConcurrency)
          const now = yield* DateTime.now
          const sent = yield* sender.sendAll(group.map(({ entry, log, target }) => ({
            url: target.url,
            secret: target.secret,
            messageId: entry.log_id,
            timestamp: now,
            body: deliveryBody(now, target.model, log)
          })))
          group.forEach(({ entry }, i) => outcomes.push(deliveryOutcome(entry, sent[i]!, now, retryBase)))
        }
        yield* record(outcomes)
        for (const outcome of outcomes) deliveries[outcome.delivery.status].updateUnsafe(1, metricsContext)
        return due.length
      }).pipe(Effect.withSpan("ModelWebhooks.deliverDue"))

      return ModelWebhooks.of({ configure, get, deliverDue })
    })
  )
}
