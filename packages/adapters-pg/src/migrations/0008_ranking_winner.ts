import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** The candidate the leaderboard's ranking names, which `ranking_winner` serves (human evaluation sets it). */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE leaderboards ADD COLUMN ranking_winner_id uuid`
})
