import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Web sessions: a signed-in browser's session under the digest of its secret (the secret itself is
 * only in the browser's HttpOnly cookie), with the claims of the token that opened it, until that
 * token's `exp`. Deleting a row is signing out; ended rows are removed as they are found.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE web_sessions (
      secret_hash text PRIMARY KEY,
      user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      subject text NOT NULL,
      email text,
      email_verified boolean NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      CHECK (expires_at > created_at)
    )`
  yield* sql`CREATE INDEX web_sessions_expires_at ON web_sessions (expires_at)`
  yield* sql`CREATE INDEX web_sessions_user_id ON web_sessions (user_id)`
})
