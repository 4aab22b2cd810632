import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Runs. A leaderboard has at most one active (queued or running) run: a partial unique index, so two
 * instances cannot both start one. A run's rows are copied in when it starts (a GET dataset can
 * change, a PUSH dataset grows), and a cell is keyed by (run, candidate, row): written once, so a
 * repeated step asks nobody twice. `prior_status` is what the leaderboard's status was before the
 * run made it `running`, given back when the run ends.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE runs (
      id uuid PRIMARY KEY,
      leaderboard_id uuid NOT NULL REFERENCES leaderboards (id) ON DELETE CASCADE,
      workspace_id uuid NOT NULL,
      status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
      run_source text NOT NULL,
      eval_type text NOT NULL,
      model_ids uuid[] NOT NULL,
      improve_dataset boolean NOT NULL,
      prior_status text NOT NULL,
      progress jsonb,
      results jsonb NOT NULL DEFAULT '[]',
      winner_leaderboard_model_id uuid,
      dataset jsonb,
      error text,
      created_at timestamptz NOT NULL,
      started_at timestamptz,
      finished_at timestamptz
    )`
  yield* sql`CREATE UNIQUE INDEX runs_active_idx ON runs (leaderboard_id) WHERE status IN ('queued', 'running')`
  yield* sql`CREATE INDEX runs_leaderboard_idx ON runs (leaderboard_id, created_at DESC, id DESC)`
  yield* sql`
    CREATE TABLE run_rows (
      run_id uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
      idx integer NOT NULL,
      prompt jsonb NOT NULL,
      input text NOT NULL,
      reference text,
      PRIMARY KEY (run_id, idx)
    )`
  yield* sql`
    CREATE TABLE run_cells (
      run_id uuid NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
      candidate_id uuid NOT NULL,
      row_idx integer NOT NULL,
      output text,
      verdict text CHECK (verdict IN ('correct', 'incorrect')),
      reason text,
      error text,
      latency_ms double precision,
      cost_usd double precision,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (run_id, row_idx, candidate_id)
    )`
})
