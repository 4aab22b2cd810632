import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Fine-tunes' calls are traced too (source `fine_tune`, run_id the fine-tune run's), and models
 * keep the unknown properties of their (open) PATCH body in `extra`.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE traces DROP CONSTRAINT traces_source_check`
  yield* sql`
    ALTER TABLE traces ADD CONSTRAINT traces_source_check
      CHECK (source IN ('run', 'inference', 'dataset', 'manual', 'fine_tune'))`
  // a model is an open object: properties clients add through PATCH are kept and returned
  yield* sql`ALTER TABLE models ADD COLUMN extra jsonb NOT NULL DEFAULT '{}'`
})
