import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE token_spend (
      token_id uuid NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
      window_start timestamptz NOT NULL,
      settled_usd double precision NOT NULL DEFAULT 0,
      reserved_usd double precision NOT NULL DEFAULT 0 CHECK (reserved_usd >= -1e-9),
      PRIMARY KEY (token_id, window_start)
    )`
  yield* sql`
    CREATE TABLE token_reservations (
      id uuid PRIMARY KEY,
      token_id uuid NOT NULL,
      window_start timestamptz NOT NULL,
      amount_usd double precision NOT NULL,
      expires_at timestamptz NOT NULL,
      FOREIGN KEY (token_id, window_start) REFERENCES token_spend (token_id, window_start) ON DELETE CASCADE
    )`
  yield* sql`CREATE INDEX token_reservations_expiry_idx ON token_reservations (expires_at)`
})
