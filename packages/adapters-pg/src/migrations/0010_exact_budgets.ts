import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Exact money (numeric, no float leftovers), and the marker for a call whose cost cannot be known
 * in advance: while one is in flight no other call of the token and window starts.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE token_spend
      DROP CONSTRAINT IF EXISTS token_spend_reserved_usd_check,
      ALTER COLUMN settled_usd TYPE numeric USING round(settled_usd::numeric, 12),
      ALTER COLUMN reserved_usd TYPE numeric USING greatest(round(reserved_usd::numeric, 12), 0),
      ADD COLUMN unpriced_in_flight integer NOT NULL DEFAULT 0 CHECK (unpriced_in_flight BETWEEN 0 AND 1),
      ADD CONSTRAINT token_spend_reserved_usd_check CHECK (reserved_usd >= 0)`
  yield* sql`
    ALTER TABLE token_reservations
      ALTER COLUMN amount_usd TYPE numeric USING round(amount_usd::numeric, 12),
      ADD COLUMN unpriced boolean NOT NULL DEFAULT false`
})
