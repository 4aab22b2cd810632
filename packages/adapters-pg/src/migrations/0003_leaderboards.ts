import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE leaderboards (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      name text NOT NULL,
      description text NOT NULL,
      status text NOT NULL CHECK (status IN ('active', 'running', 'paused', 'archived')),
      chosen_model_strategy text NOT NULL CHECK (chosen_model_strategy IN ('ranking_winner', 'manual')),
      chosen_leaderboard_model_id uuid,
      schedule jsonb NOT NULL,
      challenge jsonb NOT NULL,
      extra jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz
    )`
  yield* sql`CREATE INDEX leaderboards_workspace_idx ON leaderboards (workspace_id, id DESC) WHERE deleted_at IS NULL`
  yield* sql`
    CREATE TABLE leaderboard_models (
      id uuid PRIMARY KEY,
      leaderboard_id uuid NOT NULL REFERENCES leaderboards (id) ON DELETE CASCADE,
      name text NOT NULL,
      platform text NOT NULL CHECK (platform IN ('Router', 'Custom', 'Hub', 'Service')),
      model_name text,
      model_url text,
      url text,
      model_id uuid,
      auth_type text NOT NULL CHECK (auth_type IN ('bearer', 'header', 'none')),
      auth_header_name text,
      sealed_token text,
      input_price_per_m_tokens double precision,
      output_price_per_m_tokens double precision,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX leaderboard_models_leaderboard_idx ON leaderboard_models (leaderboard_id, id)`
})
