import { Context, DateTime, Effect, Layer, Option, Ref } from "effect"
import { storableJson } from "../shared/index.ts"
import type { InferenceLog } from "./InferenceLog.ts"
import { InferenceLogReader } from "./InferenceLogReader.ts"
import { InferenceLogWriter } from "./InferenceLogWriter.ts"
import { deliveredLogJson, type ModelWebhook, type OutboxEntry, type WebhookDelivery } from "./Webhook.ts"
import { WebhookOutbox } from "./WebhookOutbox.ts"
import { WebhookRepository } from "./WebhookRepository.ts"

/** A jsonb column: its text made storable, and only what JSON keeps. */
const json = <A>(value: A): A => JSON.parse(JSON.stringify(storableJson(value)))

const byText = (a: string, b: string) => a < b ? -1 : a > b ? 1 : 0
const byTime = (a: DateTime.Utc, b: DateTime.Utc) => DateTime.toEpochMillis(a) - DateTime.toEpochMillis(b)

/** What a log to be delivered carries in `metadata.webhook_delivery` until its first attempt. */
const pending: WebhookDelivery = { status: "pending", attempts: 0, last_status_code: null, last_error: null, delivered_at: null }

interface Waiting {
  readonly entry: OutboxEntry
  /** When the next attempt is due, or the end of the lease while one is under way. */
  readonly next_attempt_at: DateTime.Utc
}

interface Tables {
  readonly logs: ReadonlyMap<string, InferenceLog>
  readonly outbox: ReadonlyMap<string, Waiting>
}

/**
 * The inference logs in memory, with the Postgres adapters' semantics: one store behind the
 * InferenceLogWriter, the InferenceLogReader and the WebhookOutbox. `record` stores at once (so
 * `flush` has nothing to wait for), a log with its outbox row; a log already stored is kept as it
 * was. Nothing is refused: there is no model table to refer to.
 */
const layer: Layer.Layer<InferenceLogWriter | InferenceLogReader | WebhookOutbox> = Layer.effectContext(
  Effect.gen(function*() {
    const tables = yield* Ref.make<Tables>({ logs: new Map(), outbox: new Map() })
    /** Answers after a yield, as a round trip would, so concurrent callers interleave as against Postgres. */
    const modify = <A>(f: (current: Tables) => readonly [A, Tables]) => Effect.andThen(Effect.yieldNow, Ref.modify(tables, f))
    const read = <A>(f: (current: Tables) => A) => Effect.andThen(Effect.yieldNow, Effect.map(Ref.get(tables), f))

    const writer = InferenceLogWriter.of({
      record: (log, { deliver }) =>
        modify((current) => {
          if (current.logs.has(log.id)) return [undefined, current]
          const stored = {
            ...log,
            input_message: json(log.input_message),
            output_messages: json(log.output_messages),
            traces: json(log.traces),
            metadata: json(deliver ? { ...log.metadata, webhook_delivery: pending } : log.metadata)
          }
          const outbox = deliver
            ? new Map(current.outbox).set(log.id, {
              entry: { log_id: log.id, model_id: log.model_id, attempts: 0 },
              next_attempt_at: log.created_at
            })
            : current.outbox
          return [undefined, { logs: new Map(current.logs).set(log.id, stored), outbox }]
        }),
      flush: Effect.void
    })

    const reader = InferenceLogReader.of({
      list: (modelId, limit, window = {}) =>
        read((current) => {
          const newestFirst = (a: InferenceLog, b: InferenceLog) => byTime(b.created_at, a.created_at) || byText(b.id, a.id)
          const after = window.cursor === undefined ? undefined : current.logs.get(window.cursor)
          if (window.cursor !== undefined && (after === undefined || after.model_id !== modelId)) return []
          return [...current.logs.values()]
            .filter((log) =>
              log.model_id === modelId &&
              (after === undefined || newestFirst(after, log) < 0) &&
              (window.from === undefined || byTime(log.created_at, window.from) >= 0) &&
              (window.to === undefined || byTime(log.created_at, window.to) < 0)
            )
            .sort(newestFirst)
            .slice(0, Math.max(0, limit))
        }),
      find: (id) => read((current) => Option.fromUndefinedOr(current.logs.get(id))),
      findMany: (ids) => read((current) => [...new Set(ids)].flatMap((id) => current.logs.get(id) ?? []))
    })

    const outbox = WebhookOutbox.of({
      claim: (now, limit, lease) =>
        modify((current) => {
          const until = DateTime.add(now, { seconds: lease.seconds })
          const due = [...current.outbox.values()]
            .filter((waiting) => DateTime.isLessThanOrEqualTo(waiting.next_attempt_at, now))
            .sort((a, b) => byTime(a.next_attempt_at, b.next_attempt_at) || byText(a.entry.log_id, b.entry.log_id))
            .slice(0, Math.max(0, limit))
          const leased = new Map(current.outbox)
          for (const waiting of due) leased.set(waiting.entry.log_id, { ...waiting, next_attempt_at: until })
          return [due.map((waiting) => waiting.entry), { ...current, outbox: leased }]
        }),
      logsToDeliver: (logIds) =>
        read((current) =>
          new Map(logIds.flatMap((id) => {
            const log = current.logs.get(id)
            return log === undefined ? [] : [[id, deliveredLogJson(log)] as const]
          }))
        ),
      record: (outcomes) =>
        modify((current) => {
          const outbox = new Map(current.outbox)
          const logs = new Map(current.logs)
          for (const { delivery, log_id, next } of outcomes) {
            const waiting = outbox.get(log_id)
            const log = logs.get(log_id)
            // an entry already done is not written over
            if (waiting === undefined || log === undefined) continue
            if (next === null) outbox.delete(log_id)
            else outbox.set(log_id, { entry: { ...waiting.entry, attempts: delivery.attempts }, next_attempt_at: next })
            logs.set(log_id, { ...log, metadata: { ...log.metadata, webhook_delivery: json({ ...delivery }) } })
          }
          return [undefined, { logs, outbox }]
        })
    })

    return Context.make(InferenceLogWriter, writer).pipe(
      Context.add(InferenceLogReader, reader),
      Context.add(WebhookOutbox, outbox)
    )
  })
)

export const InferenceLogsMemory = { layer }

/** The models' webhooks in memory; clearing one removes it, as in Postgres. */
const webhookLayer = Layer.effect(
  WebhookRepository,
  Effect.map(Ref.make<ReadonlyMap<string, ModelWebhook>>(new Map()), (webhooks) =>
    WebhookRepository.of({
      find: (modelId) => Effect.map(Ref.get(webhooks), (current) => Option.fromUndefinedOr(current.get(modelId))),
      save: (webhook) =>
        Ref.update(webhooks, (current) => {
          const next = new Map(current)
          if (webhook.url === null) next.delete(webhook.model_id)
          else {
            next.set(webhook.model_id, {
              model_id: webhook.model_id,
              url: webhook.url,
              enabled: webhook.enabled,
              sealed_secret: webhook.sealed_secret,
              secret_created_at: webhook.secret_created_at,
              updated_at: webhook.updated_at
            })
          }
          return next
        })
    }))
)

export const WebhookRepositoryMemory = { layer: webhookLayer }
