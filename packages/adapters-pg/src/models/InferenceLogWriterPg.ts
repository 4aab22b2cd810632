import { DateTime, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { type InferenceLog, InferenceLogWriter, type WebhookDelivery } from "@podium/domain/models"
import { storableJsonText } from "@podium/domain/shared"
import { groupCommit } from "../GroupCommit.ts"

/** Most rows in one statement: one JSON parameter expanded by jsonb_to_recordset. */
const maxBatch = 500


/** What a log to be delivered carries in `metadata.webhook_delivery` until its first attempt. */
const pending: WebhookDelivery = { status: "pending", attempts: 0, last_status_code: null, last_error: null, delivered_at: null }

interface Queued {
  readonly log: InferenceLog
  readonly deliver: boolean
}

/** One row of the batch's JSON. */
const rowOf = ({ deliver, log }: Queued) => ({
  id: log.id,
  model_id: log.model_id,
  workspace_id: log.workspace_id,
  version_id: log.version_id,
  timestamp: DateTime.formatIso(log.timestamp),
  input_message: log.input_message,
  output_messages: log.output_messages,
  traces: log.traces,
  metadata: deliver ? { ...log.metadata, webhook_delivery: pending } : log.metadata,
  created_at: DateTime.formatIso(log.created_at),
  deliver
})

/**
 * Logs are written by group commit (GroupCommit.ts), like traces: one statement per batch inserts
 * the logs and, for those to be delivered, their outbox rows (due at the log's creation): both or
 * neither. A log already stored (a retried batch whose commit went through) is skipped with its
 * outbox row. A log the database refuses (a model that is gone) is set aside without holding the
 * others. Strings are stored with U+0000 and lone surrogates replaced. Closing the layer writes
 * what is queued first.
 */
const layer = Layer.effect(
  InferenceLogWriter,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const writer = yield* groupCommit<Queued>({
      what: "inference log",
      maxBatch,
      describe: ({ log }) => ({ log_id: log.id, model_id: log.model_id }),
      write: (batch) =>
        sql`
          WITH batch AS (
            SELECT * FROM jsonb_to_recordset(${storableJsonText(batch.map(rowOf))}::jsonb)
              AS t(id uuid, model_id uuid, workspace_id uuid, version_id uuid, "timestamp" timestamptz, input_message jsonb,
                   output_messages jsonb, traces jsonb, metadata jsonb, created_at timestamptz, deliver boolean)
          ), stored AS (
            INSERT INTO model_inference_logs (id, model_id, workspace_id, version_id, "timestamp", input_message,
              output_messages, traces, metadata, created_at)
            SELECT id, model_id, workspace_id, version_id, "timestamp", input_message, output_messages, traces, metadata,
              created_at
            FROM batch
            ON CONFLICT (id) DO NOTHING
            RETURNING id
          )
          INSERT INTO webhook_outbox (log_id, model_id, attempts, next_attempt_at)
          SELECT b.id, b.model_id, 0, b.created_at FROM batch b JOIN stored s ON s.id = b.id WHERE b.deliver
          ON CONFLICT (log_id) DO NOTHING`
    })
    return InferenceLogWriter.of({ record: (log, { deliver }) => writer.record({ log, deliver }), flush: writer.flush })
  })
)

export const InferenceLogWriterPg = { layer }
