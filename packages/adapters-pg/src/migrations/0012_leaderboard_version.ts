import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A leaderboard's `version` counts its changes, and every update is conditional on the one it was
 * computed from, so concurrent updates of different fields cannot overwrite each other. The chosen
 * candidate becomes a foreign key to a candidate of the same leaderboard: deleting it clears the choice.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE leaderboards ADD COLUMN version integer NOT NULL DEFAULT 1`
  // a choice of a candidate that is gone (or another leaderboard's) falls back to the ranking, as removal does
  yield* sql`
    UPDATE leaderboards l SET chosen_leaderboard_model_id = NULL, chosen_model_strategy = 'ranking_winner'
    WHERE chosen_leaderboard_model_id IS NOT NULL AND NOT EXISTS (
      SELECT 1 FROM leaderboard_models m WHERE m.leaderboard_id = l.id AND m.id = l.chosen_leaderboard_model_id)`
  // the key the foreign key needs; its index also serves what the plain one on these columns did
  yield* sql`ALTER TABLE leaderboard_models ADD UNIQUE (leaderboard_id, id)`
  yield* sql`DROP INDEX leaderboard_models_leaderboard_idx`
  yield* sql`
    ALTER TABLE leaderboards ADD FOREIGN KEY (id, chosen_leaderboard_model_id)
      REFERENCES leaderboard_models (leaderboard_id, id) ON DELETE SET NULL (chosen_leaderboard_model_id)`
})
