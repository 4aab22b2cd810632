import { Context, type DateTime, type Effect } from "effect"
import type { DeliveryOutcome, OutboxEntry } from "./Webhook.ts"

/**
 * The durable outbox of `model.inference` deliveries. Rows are written with their log (see
 * InferenceLogWriter). `claim` leases due rows (each to one claimer at a time across instances, for
 * `lease`); `record` stores outcomes, each in its log's `metadata.webhook_delivery`, and, in the
 * same transaction, either schedules the entry's next attempt (`next`) or removes it (null: done,
 * delivered or given up). An entry already removed is not written over.
 */
export class WebhookOutbox extends Context.Service<WebhookOutbox, {
  readonly claim: (now: DateTime.Utc, limit: number, lease: { readonly seconds: number }) => Effect.Effect<ReadonlyArray<OutboxEntry>>
  /** The logs of `logIds` as their webhook delivers them (`deliveredLogJson`), by id; a log that is gone is left out. */
  readonly logsToDeliver: (logIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, string>>
  readonly record: (outcomes: ReadonlyArray<DeliveryOutcome>) => Effect.Effect<void>
}>()("@podium/domain/models/WebhookOutbox") {}
