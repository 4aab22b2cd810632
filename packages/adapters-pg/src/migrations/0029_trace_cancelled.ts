import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** A streamed call the caller left mid-stream is traced as `cancelled`, with what had arrived. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE traces DROP CONSTRAINT traces_status_check`
  yield* sql`ALTER TABLE traces ADD CONSTRAINT traces_status_check CHECK (status IN ('success', 'error', 'cancelled'))`
})
