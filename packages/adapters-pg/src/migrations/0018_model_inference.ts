import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Model inference: its logs, the model's `model.inference` webhook, and the outbox of deliveries.
 *
 * - A log goes with its model's row (a workspace removed takes its models, and so their logs).
 * - An outbox row is written in the same statement as its log, so a log is delivered if and only if
 *   it was stored; it goes with its log. `next_attempt_at` is both when the next attempt is due and,
 *   while one is under way, the end of its claimer's lease.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE model_inference_logs (
      id uuid PRIMARY KEY,
      model_id uuid NOT NULL REFERENCES models (id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL,
      version_id uuid NOT NULL,
      timestamp timestamptz NOT NULL,
      input_message jsonb NOT NULL,
      output_messages jsonb NOT NULL,
      traces jsonb NOT NULL,
      metadata jsonb NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX model_inference_logs_model_idx ON model_inference_logs (model_id, created_at DESC, id DESC)`

  yield* sql`
    CREATE TABLE model_webhooks (
      model_id uuid PRIMARY KEY REFERENCES models (id) ON DELETE CASCADE,
      url text NOT NULL,
      enabled boolean NOT NULL,
      sealed_secret text NOT NULL,
      updated_at timestamptz NOT NULL
    )`

  yield* sql`
    CREATE TABLE webhook_outbox (
      log_id uuid PRIMARY KEY REFERENCES model_inference_logs (id) ON DELETE CASCADE,
      model_id uuid NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX webhook_outbox_due_idx ON webhook_outbox (next_attempt_at)`
})
