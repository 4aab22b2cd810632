import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * `model_url` (the spec's field) is a candidate's endpoint and `url` its alias, written together
 * since: a candidate stored with only `url` gets it as `model_url` as well. `url` is what calls
 * used, so it wins over an older, different `model_url`; one without `url` keeps its `model_url`.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`UPDATE leaderboard_models SET model_url = url WHERE url IS NOT NULL AND model_url IS DISTINCT FROM url`
})
