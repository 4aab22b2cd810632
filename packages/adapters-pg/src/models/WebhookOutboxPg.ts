import { PgClient } from "@effect/sql-pg"
import { DateTime, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { type DeliveryOutcome, WebhookOutbox } from "@podium/domain/models"
import { ModelId, storableJson } from "@podium/domain/shared"
import { toDate } from "../Rows.ts"

const EntryRow = Schema.Struct({ log_id: Schema.String, model_id: ModelId, attempts: Schema.Int })
const decodeEntries = Schema.decodeUnknownEffect(Schema.Array(EntryRow))

/** A time as `DateTime.formatIso` writes it (UTC, milliseconds, `Z`). */
const iso = (column: string) => `to_json(to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text`

/**
 * A claim moves the due rows' `next_attempt_at` to the end of the lease, taking only rows no other
 * claim holds (SKIP LOCKED); a claim that read a row before another's lease was committed re-checks
 * it once it has the lock and finds it no longer due. So each row has one claimer at a time.
 *
 * `logsToDeliver` has Postgres write each log's JSON (the jsonb columns as stored, in the keys'
 * order of `deliveredLogJson`), so a delivery neither parses, decodes nor re-encodes its log.
 *
 * `record` is one statement for the whole batch: it schedules or removes each outbox row and, only
 * where there was one, writes the outcome into its log's metadata; an entry already done is not
 * written over.
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
      logsToDeliver: Effect.fn("WebhookOutbox.logsToDeliver")(function*(logIds: ReadonlyArray<string>) {
        if (logIds.length === 0) return new Map<string, string>()
        const rows = yield* sql<{ readonly id: string; readonly json: string }>`
          SELECT id::text AS id,
            '{"id":' || to_json(id::text)::text || ',"timestamp":' || ${sql.literal(iso(`"timestamp"`))} ||
            ',"input_message":' || input_message::text || ',"output_messages":' || output_messages::text ||
            ',"traces":' || traces::text || ',"metadata":' || (metadata - 'webhook_delivery')::text ||
            ',"created_at":' || ${sql.literal(iso("created_at"))} || '}' AS json
          FROM model_inference_logs WHERE id = ANY(${[...new Set(logIds)]}::uuid[])`.pipe(Effect.orDie)
        return new Map(rows.map((row) => [row.id, row.json]))
      }),
      record: Effect.fn("WebhookOutbox.record")(function*(outcomes: ReadonlyArray<DeliveryOutcome>) {
        if (outcomes.length === 0) return
        const rows = outcomes.map(({ delivery, log_id, next }) => ({
          log_id,
          delivery: storableJson({ ...delivery }),
          next_attempt_at: next === null ? null : DateTime.formatIso(next)
        }))
        yield* sql`
          WITH outcome AS (
            SELECT DISTINCT ON (log_id) * FROM jsonb_to_recordset(${pg.json(rows)})
              AS t(log_id uuid, delivery jsonb, next_attempt_at timestamptz)
          ), done AS (
            DELETE FROM webhook_outbox o USING outcome
            WHERE o.log_id = outcome.log_id AND outcome.next_attempt_at IS NULL
            RETURNING o.log_id
          ), again AS (
            UPDATE webhook_outbox o SET attempts = (outcome.delivery->>'attempts')::int, next_attempt_at = outcome.next_attempt_at
            FROM outcome WHERE o.log_id = outcome.log_id AND outcome.next_attempt_at IS NOT NULL
            RETURNING o.log_id
          )
          UPDATE model_inference_logs l SET metadata = jsonb_set(l.metadata, '{webhook_delivery}', outcome.delivery)
          FROM outcome
          WHERE l.id = outcome.log_id AND l.id IN (SELECT log_id FROM done UNION ALL SELECT log_id FROM again)`.pipe(Effect.orDie)
      })
    })
  })
)

export const WebhookOutboxPg = { layer }
