import { assert, describe, layer } from "@effect/vitest"
import type { WorkspaceRepository } from "@podium/domain/access"
import {
  InferenceLog,
  InferenceLogReader,
  InferenceLogWriter,
  Model,
  newModel,
  ModelRepository,
  type ModelWebhook,
  type OutboxEntry,
  type WebhookDelivery,
  WebhookOutbox,
  WebhookRepository
} from "@podium/domain/models"
import { ModelVersionId } from "@podium/domain/shared"
import { Context, DateTime, Effect, Exit, Layer, Option, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { aUser } from "./WorkspaceRepository.contract.ts"

const uuid = () => crypto.randomUUID() as string
const t0 = DateTime.makeUnsafe("2026-11-22T10:00:00.123Z")
const at = (seconds: number, from = t0) => DateTime.add(from, { seconds })

/**
 * Claims see every due entry of the store, the other tests' too: each test that claims keeps to an
 * era of its own (tests run one after another) and looks only at its own entries.
 */
const era = (year: number) => DateTime.makeUnsafe(`${year}-03-01T00:00:00.000Z`)

const pending: WebhookDelivery = { status: "pending", attempts: 0, last_status_code: null, last_error: null, delivered_at: null }

/** The fields alone, to compare as plain data. */
const plain = (log: InferenceLog) => ({ ...log })

const aModel = Effect.gen(function*() {
  const { workspaceId } = yield* aUser()
  const model = newModel({
    id: uuid() as Model["id"],
    workspace_id: workspaceId,
    name: "support-bot",
    selected_base_model_version_id: "openai:gpt-4o-mini",
    created_at: t0
  })
  yield* (yield* ModelRepository).insert(model)
  return model
})

const aLog = (model: Model, created_at: DateTime.Utc, fields: Partial<InferenceLog> = {}): InferenceLog => {
  const version_id = ModelVersionId.make(uuid())
  return {
    id: uuid(),
    model_id: model.id,
    workspace_id: model.workspace_id,
    version_id,
    timestamp: DateTime.subtract(created_at, { milliseconds: 250 }),
    input_message: { messages: [{ role: "user", content: "What is 2+2?" }], temperature: 0 },
    output_messages: { role: "assistant", content: "4" },
    traces: { request: { model: "ft:gpt-4o-mini:x", authorization: "[redacted]" }, response: { id: "chatcmpl-1" } },
    metadata: { latency_ms: 12.5, usage: { prompt_tokens: 5, completion_tokens: 1 }, cost_usd: 0.000001, version_id, status: "success" },
    created_at,
    ...fields
  }
}

/** Records the logs together (one batch where the writer batches) and waits until they are written. */
const recorded = (logs: ReadonlyArray<InferenceLog>, deliver: boolean) =>
  Effect.gen(function*() {
    const writer = yield* InferenceLogWriter
    yield* Effect.forEach(logs, (log) => writer.record(log, { deliver }), { concurrency: "unbounded", discard: true })
    yield* writer.flush
  })

const found = (id: string) =>
  Effect.flatMap(InferenceLogReader, (reader) =>
    Effect.map(reader.find(id), (log) => {
      assert.isTrue(Option.isSome(log), `log ${id} was expected`)
      return Option.getOrThrow(log)
    }))

/** The claimed entries of `logs`, in the order claimed. */
const claimMine = (logs: ReadonlyArray<{ readonly id: string }>, now: DateTime.Utc, lease = 30, limit = 1000) =>
  Effect.flatMap(WebhookOutbox, (outbox) =>
    Effect.map(outbox.claim(now, limit, { seconds: lease }), (entries) => {
      const ids = new Set(logs.map((log) => log.id))
      return entries.filter((entry) => ids.has(entry.log_id))
    }))

const byLogId = (a: OutboxEntry, b: OutboxEntry) => a.log_id < b.log_id ? -1 : a.log_id > b.log_id ? 1 : 0
const byId = (a: { readonly id: string }, b: { readonly id: string }) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0

const entryOf = (log: InferenceLog, attempts = 0): OutboxEntry => ({ log_id: log.id, model_id: log.model_id, attempts })

const aWebhook = (model: Model, fields: Partial<ModelWebhook> = {}): ModelWebhook => ({
  model_id: model.id,
  url: "https://hooks.example.com/podium",
  enabled: true,
  sealed_secret: "sealed:whsec_c2VjcmV0",
  secret_created_at: t0,
  updated_at: t0,
  ...fields
})

export type Ports =
  | InferenceLogWriter
  | InferenceLogReader
  | WebhookOutbox
  | WebhookRepository
  | ModelRepository
  | WorkspaceRepository

/**
 * The behaviour the model inference use cases rely on, declared once and run against every adapter
 * of `InferenceLogWriter`, `InferenceLogReader`, `WebhookOutbox` and `WebhookRepository` (STYLE.md
 * 19): `makeLayer` builds a fresh set. Real time: the Postgres writer's batches wait on the clock.
 */
export const inferenceLogsContract = (name: string, makeLayer: () => Layer.Layer<Ports, unknown>) =>
  describe(`InferenceLogs and webhooks contract: ${name}`, () => {
    layer(makeLayer(), { timeout: 60_000, excludeTestServices: true })((it) => {
      it.effect("recorded logs are found as given and listed newest first, up to the limit", () =>
        Effect.gen(function*() {
          const reader = yield* InferenceLogReader
          const model = yield* aModel
          const other = yield* aModel
          const [low, high] = [uuid(), uuid()].sort()
          const oldest = aLog(model, at(1))
          const tiedLow = aLog(model, at(2), { id: low! })
          const tiedHigh = aLog(model, at(2), { id: high! })
          const newest = aLog(model, at(3))
          const elsewhere = aLog(other, at(4))
          yield* recorded([tiedLow, newest, elsewhere, oldest, tiedHigh], false)

          assert.deepStrictEqual(plain(yield* found(tiedLow.id)), plain(tiedLow))
          assert.isTrue(Option.isNone(yield* reader.find(uuid())))
          const listed = (modelId: string, limit: number) => Effect.map(reader.list(modelId, limit), (logs) => logs.map((l) => l.id))
          assert.deepStrictEqual(yield* listed(model.id, 100), [newest.id, tiedHigh.id, tiedLow.id, oldest.id])
          assert.deepStrictEqual(yield* listed(model.id, 2), [newest.id, tiedHigh.id])
          assert.deepStrictEqual(yield* listed(other.id, 100), [elsewhere.id])
          assert.deepStrictEqual(yield* listed(uuid(), 100), [])
          assert.deepStrictEqual((yield* reader.list(model.id, 1)).map(plain), [plain(newest)])
          const many = yield* reader.findMany([oldest.id, uuid(), elsewhere.id, oldest.id])
          assert.deepStrictEqual(many.map(plain).sort(byId), [plain(oldest), plain(elsewhere)].sort(byId))
          assert.deepStrictEqual(yield* reader.findMany([]), [])

          // the same log again changes nothing
          yield* recorded([aLog(model, at(9), { id: oldest.id, metadata: { again: true } })], true)
          assert.deepStrictEqual(plain(yield* found(oldest.id)), plain(oldest))
          assert.deepStrictEqual(yield* claimMine([oldest], at(60)), [])
        }))

      it.effect("a log to deliver gets an outbox entry due at its creation and a pending webhook_delivery; others none", () =>
        Effect.gen(function*() {
          const start = era(2001)
          const model = yield* aModel
          const delivered = [aLog(model, at(1, start)), aLog(model, at(2, start))]
          const kept = aLog(model, at(1, start))
          yield* recorded(delivered, true)
          yield* recorded([kept], false)

          for (const log of delivered) {
            const stored = yield* found(log.id)
            assert.deepStrictEqual(stored.metadata, { ...log.metadata, webhook_delivery: pending })
            assert.deepStrictEqual(plain(stored), plain({ ...log, metadata: stored.metadata }))
          }
          assert.deepStrictEqual(plain(yield* found(kept.id)), plain(kept))

          const mine = [...delivered, kept]
          assert.deepStrictEqual(yield* claimMine(mine, at(0, start)), [])
          assert.deepStrictEqual(yield* claimMine(mine, at(1, start)), [entryOf(delivered[0]!)])
          assert.deepStrictEqual(yield* claimMine(mine, at(5, start)), [entryOf(delivered[1]!)])
        }))

      it.effect("text Postgres cannot hold (U+0000, lone surrogates) is stored as U+FFFD and holds no other log of its batch", () =>
        Effect.gen(function*() {
          const model = yield* aModel
          const poisoned = aLog(model, at(1), {
            input_message: { messages: [{ role: "user", content: "a\u0000b" }], "k\u0000": "v" },
            output_messages: { role: "assistant", content: "x\ud800y" },
            traces: { response: { body: "\udc00\ud83d" } },
            metadata: { error: "upstream\u0000 said \udc00", "\ud800": 1 }
          })
          const others = Array.from({ length: 20 }, (_, i) => aLog(model, at(2 + i)))
          yield* recorded([poisoned, ...others], true)

          const stored = yield* found(poisoned.id)
          assert.deepStrictEqual(stored.input_message, { messages: [{ role: "user", content: "a\uFFFDb" }], "k\uFFFD": "v" })
          assert.deepStrictEqual(stored.output_messages, { role: "assistant", content: "x\uFFFDy" })
          assert.deepStrictEqual(stored.traces, { response: { body: "\uFFFD\uFFFD" } })
          assert.deepStrictEqual(stored.metadata, { error: "upstream\uFFFD said \uFFFD", "\uFFFD": 1, webhook_delivery: pending })
          assert.strictEqual((yield* (yield* InferenceLogReader).list(model.id, 100)).length, 21)
          assert.deepStrictEqual(
            (yield* claimMine([poisoned, ...others], at(60))).map((e) => e.log_id).sort(),
            [poisoned, ...others].map((l) => l.id).sort()
          )
        }))

      it.effect("a claim leases its entries: a claim before the lease ends gets none of them, one after gets them again", () =>
        Effect.gen(function*() {
          // the oldest era of any test's, so that no other entry is due with these
          const start = era(1990)
          const outbox = yield* WebhookOutbox
          const model = yield* aModel
          const logs = Array.from({ length: 5 }, (_, i) => aLog(model, at(i, start)))
          yield* recorded(logs, true)
          // the earliest due first, up to the limit
          assert.deepStrictEqual(yield* outbox.claim(at(10, start), 2, { seconds: 30 }), [entryOf(logs[0]!), entryOf(logs[1]!)])
          assert.deepStrictEqual(yield* claimMine(logs, at(10, start)), logs.slice(2).map((l) => entryOf(l)))
          assert.deepStrictEqual(yield* claimMine(logs, at(39, start)), [])
          // every lease ends at 40 s: all are due again then (in id order, being due at the same instant)
          assert.deepStrictEqual(yield* claimMine(logs, at(40, start)), logs.map((l) => entryOf(l)).sort(byLogId))
          assert.deepStrictEqual(yield* outbox.claim(at(40, start), 0, { seconds: 30 }), [])
        }))

      it.effect("concurrent claims never hand out the same entry twice, and together take every due one", () =>
        Effect.gen(function*() {
          const start = era(2003)
          const model = yield* aModel
          const logs = Array.from({ length: 200 }, (_, i) => aLog(model, at(i % 17, start)))
          yield* recorded(logs, true)
          const claimed: Array<string> = []
          for (let round = 0; round < 3; round++) {
            const batches = yield* Effect.all(
              Array.from({ length: 8 }, () => claimMine(logs, at(60, start), 300, 30)),
              { concurrency: "unbounded" }
            )
            for (const batch of batches) claimed.push(...batch.map((entry) => entry.log_id))
          }
          assert.strictEqual(new Set(claimed).size, claimed.length, "an entry was claimed twice")
          assert.deepStrictEqual(claimed.sort(), logs.map((l) => l.id).sort())
        }))

      it.effect("logs to deliver are the logs as their webhook sends them, without their delivery's outcome; a gone one is left out", () =>
        Effect.gen(function*() {
          const outbox = yield* WebhookOutbox
          const model = yield* aModel
          const log = aLog(model, at(3), {
            input_message: { messages: [{ role: "user", content: "naïve \"quotes\" 🎉\n" }], n: 1.5, big: 12345678901234 },
            metadata: { cost_usd: 0.000001, nested: { a: [1, null, true] }, status: "success" }
          })
          const other = aLog(model, at(4))
          yield* recorded([log, other], true)
          const json = yield* outbox.logsToDeliver([log.id, uuid(), other.id, log.id])
          assert.deepStrictEqual([...json.keys()].sort(), [log.id, other.id].sort())
          // what a receiver parses: the log's fields, its times as ISO text, no webhook_delivery
          assert.deepStrictEqual(JSON.parse(json.get(log.id)!), {
            id: log.id,
            timestamp: DateTime.formatIso(log.timestamp),
            input_message: log.input_message,
            output_messages: log.output_messages,
            traces: log.traces,
            metadata: log.metadata,
            created_at: DateTime.formatIso(log.created_at)
          })
          assert.deepStrictEqual(Object.keys(JSON.parse(json.get(other.id)!)), [
            "id", "timestamp", "input_message", "output_messages", "traces", "metadata", "created_at"
          ])
          yield* outbox.record([{ log_id: log.id, delivery: { ...pending, attempts: 1 }, next: at(600) }])
          assert.notProperty(JSON.parse((yield* outbox.logsToDeliver([log.id])).get(log.id)!).metadata, "webhook_delivery")
          assert.strictEqual((yield* outbox.logsToDeliver([])).size, 0)
        }))

      it.effect("recording an attempt with a next one updates attempts and metadata; without, removes the entry and keeps its outcome", () =>
        Effect.gen(function*() {
          const start = era(2004)
          const outbox = yield* WebhookOutbox
          const model = yield* aModel
          const log = aLog(model, at(0, start))
          const untouched = aLog(model, at(0, start))
          yield* recorded([log, untouched], true)
          assert.deepStrictEqual(yield* claimMine([log], at(1, start)), [entryOf(log)])

          const failed: WebhookDelivery = {
            status: "pending",
            attempts: 1,
            last_status_code: 503,
            last_error: "service unavailable\u0000",
            delivered_at: null
          }
          yield* outbox.record([{ log_id: log.id, delivery: failed, next: at(120, start) }])
          assert.deepStrictEqual((yield* found(log.id)).metadata, {
            ...log.metadata,
            webhook_delivery: { ...failed, last_error: "service unavailable\uFFFD" }
          })
          // due again at `next`, not before, with the attempts made
          assert.deepStrictEqual(yield* claimMine([log], at(119, start)), [])
          assert.deepStrictEqual(yield* claimMine([log], at(120, start)), [entryOf(log, 1)])

          const delivered: WebhookDelivery = {
            status: "delivered",
            attempts: 2,
            last_status_code: 204,
            last_error: null,
            delivered_at: "2004-03-01T00:02:01.000Z"
          }
          yield* outbox.record([{ log_id: log.id, delivery: delivered, next: null }])
          const done = { ...log.metadata, webhook_delivery: delivered }
          assert.deepStrictEqual((yield* found(log.id)).metadata, done)
          assert.deepStrictEqual(yield* claimMine([log], at(100_000, start)), [])
          // an entry already done is not written over; an unknown one changes nothing
          yield* outbox.record([{ log_id: log.id, delivery: { ...failed, status: "failed", attempts: 3 }, next: null }])
          yield* outbox.record([{ log_id: log.id, delivery: failed, next: at(200, start) }])
          yield* outbox.record([{ log_id: uuid(), delivery: failed, next: null }])
          assert.deepStrictEqual((yield* found(log.id)).metadata, done)
          assert.deepStrictEqual(yield* claimMine([log], at(100_000, start)), [])
          // the other log's entry is still there, untouched
          assert.deepStrictEqual((yield* found(untouched.id)).metadata, { ...untouched.metadata, webhook_delivery: pending })
        }))

      it.effect("one record call stores a batch of outcomes, each on its own entry; done and unknown entries are left alone", () =>
        Effect.gen(function*() {
          const start = era(2005)
          const outbox = yield* WebhookOutbox
          const model = yield* aModel
          const [retried, delivered, failed, done] = [0, 1, 2, 3].map(() => aLog(model, at(0, start)))
          yield* recorded([retried!, delivered!, failed!, done!], true)
          const outcome = (status: WebhookDelivery["status"], attempts: number): WebhookDelivery => ({
            status,
            attempts,
            last_status_code: status === "delivered" ? 204 : 500,
            last_error: status === "delivered" ? null : "the receiver answered 500",
            delivered_at: status === "delivered" ? "2005-03-01T00:00:01.000Z" : null
          })
          yield* outbox.record([{ log_id: done!.id, delivery: outcome("delivered", 1), next: null }])
          yield* outbox.record([
            { log_id: retried!.id, delivery: outcome("pending", 1), next: at(30, start) },
            { log_id: delivered!.id, delivery: outcome("delivered", 1), next: null },
            { log_id: uuid(), delivery: outcome("failed", 8), next: null },
            { log_id: failed!.id, delivery: outcome("failed", 8), next: null },
            { log_id: done!.id, delivery: outcome("failed", 2), next: null }
          ])
          const deliveryOf = (id: string) => Effect.map(found(id), (log) => log.metadata["webhook_delivery"])
          assert.deepStrictEqual(yield* deliveryOf(retried!.id), outcome("pending", 1))
          assert.deepStrictEqual(yield* deliveryOf(delivered!.id), outcome("delivered", 1))
          assert.deepStrictEqual(yield* deliveryOf(failed!.id), outcome("failed", 8))
          assert.deepStrictEqual(yield* deliveryOf(done!.id), outcome("delivered", 1))
          assert.deepStrictEqual(yield* claimMine([retried!, delivered!, failed!, done!], at(29, start)), [])
          assert.deepStrictEqual(yield* claimMine([retried!, delivered!, failed!, done!], at(30, start)), [entryOf(retried!, 1)])
          yield* outbox.record([])
        }))

      it.effect("a list reads after a cursor and from (inclusive) to (exclusive) a time", () =>
        Effect.gen(function*() {
          const reader = yield* InferenceLogReader
          const model = yield* aModel
          const other = yield* aModel
          const [low, high] = [uuid(), uuid()].sort()
          const first = aLog(model, at(1))
          const tiedLow = aLog(model, at(2), { id: low! })
          const tiedHigh = aLog(model, at(2), { id: high! })
          const third = aLog(model, at(3))
          const fourth = aLog(model, at(4))
          const elsewhere = aLog(other, at(2))
          yield* recorded([first, tiedLow, tiedHigh, third, fourth, elsewhere], false)
          const listed = (limit: number, window: Parameters<typeof reader.list>[2]) =>
            Effect.map(reader.list(model.id, limit, window), (logs) => logs.map((l) => l.id))

          assert.deepStrictEqual(yield* listed(100, { cursor: third.id }), [tiedHigh.id, tiedLow.id, first.id])
          assert.deepStrictEqual(yield* listed(1, { cursor: tiedHigh.id }), [tiedLow.id])
          assert.deepStrictEqual(yield* listed(100, { cursor: first.id }), [])
          assert.deepStrictEqual(yield* listed(100, { cursor: elsewhere.id }), [])
          assert.deepStrictEqual(yield* listed(100, { cursor: uuid() }), [])
          assert.deepStrictEqual(yield* listed(100, { from: at(2) }), [fourth.id, third.id, tiedHigh.id, tiedLow.id])
          assert.deepStrictEqual(yield* listed(100, { to: at(2) }), [first.id])
          assert.deepStrictEqual(yield* listed(100, { from: at(2), to: at(4) }), [third.id, tiedHigh.id, tiedLow.id])
          assert.deepStrictEqual(yield* listed(100, { from: at(2), to: at(4), cursor: tiedHigh.id }), [tiedLow.id])
          assert.deepStrictEqual(yield* listed(100, { from: at(3), to: at(3) }), [])
        }))

      it.effect("a model's webhook is saved, replaced and cleared", () =>
        Effect.gen(function*() {
          const webhooks = yield* WebhookRepository
          const model = yield* aModel
          const other = yield* aModel
          assert.isTrue(Option.isNone(yield* webhooks.find(model.id)))

          const first = aWebhook(model)
          yield* webhooks.save(first)
          yield* webhooks.save(aWebhook(other, { url: "https://other.example.com/" }))
          assert.deepStrictEqual(yield* webhooks.find(model.id), Option.some(first))

          const replaced = aWebhook(model, { url: "https://hooks.example.com/v2", enabled: false, sealed_secret: "sealed:2", secret_created_at: at(4), updated_at: at(5) })
          yield* webhooks.save(replaced)
          assert.deepStrictEqual(yield* webhooks.find(model.id), Option.some(replaced))

          yield* webhooks.save({ model_id: model.id, url: null, updated_at: at(6) })
          assert.isTrue(Option.isNone(yield* webhooks.find(model.id)))
          yield* webhooks.save({ model_id: model.id, url: null, updated_at: at(7) })
          assert.isTrue(Option.isNone(yield* webhooks.find(model.id)))
          assert.deepStrictEqual(Option.map(yield* webhooks.find(other.id), (w) => w.url), Option.some("https://other.example.com/"))

          const again = aWebhook(model, { updated_at: at(8) })
          yield* webhooks.save(again)
          assert.deepStrictEqual(yield* webhooks.find(model.id), Option.some(again))
        }))
    })
  })

/** Counts of the model's logs and outbox rows, and of the transactions that wrote them. */
const rowsOf = (modelId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ logs: number; entries: number; transactions: number; apart: number }>`
      SELECT (SELECT count(*)::int FROM model_inference_logs WHERE model_id = ${modelId}) AS logs,
             (SELECT count(*)::int FROM webhook_outbox WHERE model_id = ${modelId}) AS entries,
             (SELECT count(DISTINCT xmin::text)::int FROM model_inference_logs WHERE model_id = ${modelId}) AS transactions,
             (SELECT count(*)::int FROM webhook_outbox o JOIN model_inference_logs l ON l.id = o.log_id
              WHERE o.model_id = ${modelId} AND o.xmin::text <> l.xmin::text) AS apart`
    return row!
  })

/**
 * What only Postgres shows: logs and their outbox rows written together in batches, a log the
 * database refuses set aside without its neighbours, what is queued written when the writer closes,
 * and a workspace's removal taking its logs, entries and webhooks.
 */
export const inferenceLogsPostgresContract = <R>(
  makeLayer: () => Layer.Layer<Ports | SqlClient.SqlClient | NoInfer<R>, unknown>,
  /** A writer of its own, built on `makeLayer`'s services, to close within a test. */
  writerLayer: Layer.Layer<InferenceLogWriter, never, R>
) =>
  describe("InferenceLogs and webhooks contract: Postgres only", () => {
    layer(makeLayer(), { timeout: 60_000, excludeTestServices: true })((it) => {
      it.effect("a batch of logs and their outbox rows is one transaction, many logs per batch", () =>
        Effect.gen(function*() {
          const model = yield* aModel
          const logs = Array.from({ length: 600 }, (_, i) => aLog(model, at(i)))
          yield* recorded(logs, true)
          const { apart, entries, logs: stored, transactions } = yield* rowsOf(model.id)
          assert.deepStrictEqual([stored, entries, apart], [600, 600, 0])
          assert.isBelow(transactions, 50)
        }))

      it.effect("a log the database refuses is set aside with its delivery; the others of its batch are written", () =>
        Effect.gen(function*() {
          const model = yield* aModel
          const gone = new Model({ ...model, id: uuid() as Model["id"] })
          const refused = [aLog(gone, at(1)), aLog(model, at(2), { version_id: "not-a-uuid" as InferenceLog["version_id"] })]
          const logs = Array.from({ length: 300 }, (_, i) => aLog(model, at(3 + i)))
          yield* recorded([...logs.slice(0, 100), ...refused, ...logs.slice(100)], true)
          const { apart, entries, logs: stored } = yield* rowsOf(model.id)
          assert.deepStrictEqual([stored, entries, apart], [300, 300, 0])
          const reader = yield* InferenceLogReader
          for (const log of refused) assert.isTrue(Option.isNone(yield* reader.find(log.id)))
          assert.deepStrictEqual(yield* claimMine(refused, at(100_000)), [])
        }))

      it.effect("closing the writer writes what is still queued", () =>
        Effect.gen(function*() {
          const model = yield* aModel
          const scope = yield* Scope.make()
          // fresh: not the suite's writer, which the layers built so far would share
          const writer = Context.get(yield* Layer.buildWithScope(Layer.fresh(writerLayer), scope), InferenceLogWriter)
          for (let i = 0; i < 300; i++) yield* writer.record(aLog(model, at(i)), { deliver: i % 2 === 0 })
          yield* Scope.close(scope, Exit.void)
          const { entries, logs } = yield* rowsOf(model.id)
          assert.deepStrictEqual([logs, entries], [300, 150])
        }))

      it.effect("a workspace removed from the database takes its models' logs, outbox entries and webhooks", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const model = yield* aModel
          const log = aLog(model, at(1))
          yield* recorded([log], true)
          yield* (yield* WebhookRepository).save(aWebhook(model))
          yield* sql`DELETE FROM workspaces WHERE id = ${model.workspace_id}`
          assert.deepStrictEqual(yield* rowsOf(model.id), { logs: 0, entries: 0, transactions: 0, apart: 0 })
          assert.isTrue(Option.isNone(yield* (yield* WebhookRepository).find(model.id)))
        }))
    })
  })
