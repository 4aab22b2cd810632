import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The last four characters of an integration's token (`…abcd`), stored when the token is validated
 * so GET /api/integrations can tell keys apart without opening them. Rows stored before this have
 * none (null) until their token is validated again: the cipher's key lives in the server's
 * configuration, not here, so a migration cannot open the sealed tokens to backfill them.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE integrations
      ADD COLUMN key_hint text CHECK (key_hint IS NULL OR char_length(key_hint) <= 5)`
})
