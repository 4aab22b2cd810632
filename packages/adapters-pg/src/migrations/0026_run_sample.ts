import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The sample a run was asked for (size and seed, the seed drawn at the start when the request gave
 * none), so a client can ask the same rows again. Both or neither; the same bounds as the contract.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE runs
      ADD COLUMN sample_size integer CHECK (sample_size BETWEEN 1 AND 100000),
      ADD COLUMN sample_seed bigint CHECK (sample_seed BETWEEN 0 AND 2147483647),
      ADD CONSTRAINT runs_sample_check CHECK ((sample_size IS NULL) = (sample_seed IS NULL))`
})
