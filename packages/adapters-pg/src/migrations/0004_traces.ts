import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE traces (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL,
      leaderboard_id uuid NOT NULL,
      leaderboard_model_id uuid,
      source text NOT NULL CHECK (source IN ('run', 'inference', 'dataset', 'manual')),
      run_id uuid,
      input text,
      messages jsonb NOT NULL,
      output text,
      status text NOT NULL CHECK (status IN ('success', 'error')),
      error text,
      latency_ms double precision,
      usage jsonb,
      cost_usd double precision,
      token_id uuid,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX traces_leaderboard_idx ON traces (leaderboard_id, id)`
  yield* sql`CREATE INDEX traces_token_idx ON traces (token_id, created_at) WHERE token_id IS NOT NULL`
})
