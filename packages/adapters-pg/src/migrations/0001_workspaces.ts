import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE users (
      id uuid PRIMARY KEY,
      subject text NOT NULL UNIQUE,
      email text,
      created_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE workspaces (
      id uuid PRIMARY KEY,
      name text NOT NULL,
      personal_owner_id uuid UNIQUE REFERENCES users (id),
      created_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE memberships (
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
      joined_at timestamptz NOT NULL,
      PRIMARY KEY (workspace_id, user_id)
    )`
  yield* sql`CREATE INDEX memberships_user_idx ON memberships (user_id)`
  yield* sql`
    CREATE TABLE api_tokens (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      name text NOT NULL,
      display_prefix text NOT NULL,
      secret_hash text NOT NULL UNIQUE,
      scopes text[] NOT NULL,
      expires_at timestamptz,
      budget_limit numeric CHECK (budget_limit >= 0),
      budget_reset_interval text CHECK (budget_reset_interval IN ('daily', 'weekly', 'monthly')),
      created_by uuid REFERENCES users (id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL,
      last_used_at timestamptz,
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX api_tokens_workspace_idx ON api_tokens (workspace_id, created_at)`
  yield* sql`
    CREATE TABLE push_tokens (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      leaderboard_id uuid NOT NULL,
      name text NOT NULL,
      display_prefix text NOT NULL,
      secret_hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL,
      last_used_at timestamptz,
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX push_tokens_leaderboard_idx ON push_tokens (leaderboard_id)`
  yield* sql`
    CREATE TABLE invites (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      email text NOT NULL,
      role text NOT NULL CHECK (role IN ('admin', 'member')),
      status text NOT NULL CHECK (status IN ('pending', 'accepted', 'revoked', 'expired')),
      invited_by uuid REFERENCES users (id) ON DELETE SET NULL,
      redirect_to text,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      accepted_at timestamptz,
      accepted_by uuid REFERENCES users (id) ON DELETE SET NULL
    )`
  yield* sql`
    CREATE UNIQUE INDEX invites_one_pending_per_email
      ON invites (workspace_id, lower(email)) WHERE status = 'pending'`
  yield* sql`CREATE INDEX invites_pending_email_idx ON invites (lower(email)) WHERE status = 'pending'`
  yield* sql`
    CREATE TABLE integrations (
      workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
      provider text NOT NULL CHECK (provider IN ('router', 'hub')),
      sealed_token text NOT NULL,
      label text,
      details jsonb NOT NULL,
      validated_by uuid REFERENCES users (id) ON DELETE SET NULL,
      validated_at timestamptz NOT NULL,
      PRIMARY KEY (workspace_id, provider)
    )`
})
