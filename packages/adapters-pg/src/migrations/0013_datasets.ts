import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * PUSH datasets. Rows are stored once and never copied: a version is "every row consolidated into it
 * or an earlier version, less those dropped as duplicates, from `floor_id` on (newest N)", so a new
 * version costs only its pending rows. Labels (auto-labels) belong to the version that published
 * them. No foreign key on the rows: leaderboards are soft-deleted, and a key check per row would
 * cost the ingest path a lookup per row.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE datasets (
      leaderboard_id uuid PRIMARY KEY REFERENCES leaderboards (id) ON DELETE CASCADE,
      pending integer NOT NULL DEFAULT 0,
      pending_since timestamptz,
      last_consolidated_at timestamptz,
      latest_version integer,
      day date,
      day_used integer NOT NULL DEFAULT 0,
      month date,
      month_used integer NOT NULL DEFAULT 0
    )`
  yield* sql`
    CREATE TABLE dataset_rows (
      leaderboard_id uuid NOT NULL,
      id uuid NOT NULL,
      client_id text,
      batch_id uuid NOT NULL,
      data json NOT NULL,
      input text,
      reference text,
      created_at timestamptz NOT NULL,
      version integer,
      dropped boolean NOT NULL DEFAULT false,
      PRIMARY KEY (leaderboard_id, id)
    )`
  yield* sql`CREATE UNIQUE INDEX dataset_rows_client_idx ON dataset_rows (leaderboard_id, client_id) WHERE client_id IS NOT NULL`
  yield* sql`CREATE INDEX dataset_rows_pending_idx ON dataset_rows (leaderboard_id, id) WHERE version IS NULL`
  yield* sql`
    CREATE TABLE dataset_versions (
      leaderboard_id uuid NOT NULL REFERENCES leaderboards (id) ON DELETE CASCADE,
      version integer NOT NULL,
      row_count integer NOT NULL,
      total_rows integer NOT NULL,
      added_rows integer NOT NULL,
      dropped_duplicates integer NOT NULL,
      labelled_rows integer NOT NULL,
      trigger text NOT NULL CHECK (trigger IN ('manual', 'events', 'hours', 'auto_labels')),
      floor_id uuid,
      sha256 text,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (leaderboard_id, version)
    )`
  yield* sql`
    CREATE TABLE dataset_labels (
      leaderboard_id uuid NOT NULL,
      row_id uuid NOT NULL,
      job_id uuid NOT NULL,
      version integer,
      reference text NOT NULL,
      model text NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (leaderboard_id, row_id)
    )`
  yield* sql`
    CREATE TABLE dataset_label_jobs (
      id uuid PRIMARY KEY,
      leaderboard_id uuid NOT NULL REFERENCES leaderboards (id) ON DELETE CASCADE,
      base_version integer NOT NULL,
      labeller text NOT NULL,
      status text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed')),
      total integer NOT NULL,
      labelled integer NOT NULL DEFAULT 0,
      failed integer NOT NULL DEFAULT 0,
      version integer,
      error text,
      created_at timestamptz NOT NULL,
      finished_at timestamptz
    )`
  yield* sql`CREATE UNIQUE INDEX dataset_label_jobs_running_idx ON dataset_label_jobs (leaderboard_id) WHERE status = 'running'`
})
