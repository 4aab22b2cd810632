import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * When a webhook's signing secret was made (a new URL makes a new one), so a client can read it
 * back without the secret. Webhooks set before have no record of it: their last change
 * (`updated_at`, the newest moment the secret can have been made) stands in.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE model_webhooks ADD COLUMN secret_created_at timestamptz`
  yield* sql`UPDATE model_webhooks SET secret_created_at = updated_at`
  yield* sql`ALTER TABLE model_webhooks ALTER COLUMN secret_created_at SET NOT NULL`
})
