import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Whether a token trusts the price of what its calls go through (a candidate or a model version at
 * its prices): no row, not yet (its calls run alone); true once a priced call settled within its
 * reservation; false for good once one settled above it. A reservation names its subject (null for
 * an unpriced call); `unpriced` and `unpriced_in_flight` now mark calls that run alone, whether
 * their price is unknown or not yet trusted.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE token_price_trust (
      token_id uuid NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
      subject text NOT NULL,
      trusted boolean NOT NULL,
      PRIMARY KEY (token_id, subject)
    )`
  yield* sql`ALTER TABLE token_reservations ADD COLUMN subject text`
})
