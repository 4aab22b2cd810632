import { PgClient } from "@effect/sql-pg"
import { DateTime, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { type WebhookDelivery, WebhookOutbox } from "@podium/domain/models"
import { storableJson } from "@podium/domain/shared"
import { toDate, toDateOrNull } from "../Rows.ts"

const EntryRow = Schema.Struct({ log_id: Schema.String, model_id: Schema.String, attempts: Schema.Int })
const decodeEntries = Schema.decodeUnknownEffect(Schema.Array(EntryRow))

/**
 * A claim moves the due rows' `next_attempt_at` to the end of the lease, taking only rows no other
 * claim holds (SKIP LOCKED); a claim that read a row before another's lease was committed re-checks
 * it once it has the lock and finds it no longer due. So each row has one claimer at a time.
 *
 * `record` is one statement: it schedules or removes the outbox row and, only when there was one,
 * writes the outcome into the log's metadata; an entry already done is not written over.
 */
const layer = Layer.effect(
  WebhookOutbox,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient

    return WebhookOutbox.of({
      claim: Effect.fn("WebhookOutbox.claim")(function*(now: DateTime.Utc, limit: number, lease: { readonly seconds: number }) {
        const until = DateTime.add(now, { seconds: lease.seconds })
        return yield* sql`
          WITH due AS MATERIALIZED (
            SELECT log_id, next_attempt_at FROM webhook_outbox
            WHERE next_attempt_at <= ${toDate(now)}
            ORDER BY next_attempt_at, log_id LIMIT ${Math.max(0, limit)}
            FOR UPDATE SKIP LOCKED
          ), claimed AS (
            UPDATE webhook_outbox o SET next_attempt_at = ${toDate(until)}
            FROM due WHERE o.log_id = due.log_id
            RETURNING o.log_id, o.model_id, o.attempts, due.next_attempt_at AS due_at
          )
          SELECT log_id::text AS log_id, model_id::text AS model_id, attempts FROM claimed ORDER BY due_at, log_id`.pipe(
          Effect.flatMap(decodeEntries),
          Effect.orDie
        )
      }),
      record: Effect.fn("WebhookOutbox.record")(function*(logId: string, delivery: WebhookDelivery, next: DateTime.Utc | null) {
        const outcome = pg.json(storableJson({ ...delivery }))
        const entry = next === null
          ? sql`DELETE FROM webhook_outbox WHERE log_id = ${logId} RETURNING log_id`
          : sql`UPDATE webhook_outbox SET attempts = ${delivery.attempts}, next_attempt_at = ${toDateOrNull(next)}
                WHERE log_id = ${logId} RETURNING log_id`
        yield* sql`
          WITH entry AS (${entry})
          UPDATE model_inference_logs SET metadata = jsonb_set(metadata, '{webhook_delivery}', ${outcome}::jsonb)
          WHERE id IN (SELECT log_id FROM entry)`.pipe(Effect.orDie)
      })
    })
  })
)

export const WebhookOutboxPg = { layer }
