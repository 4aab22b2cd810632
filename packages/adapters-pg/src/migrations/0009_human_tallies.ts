import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The ranking's tallies kept as counters, per leaderboard configuration and candidate (and for the
 * common rows), moved in the same transaction as the case that changes them: the summary reads a
 * few rows instead of aggregating every response. Each generated case keeps what it added
 * (`contribution`), so a later change moves the counters by the difference. `human_cohorts` also
 * counts the cases of each configuration: pending = cases − confirmed.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE human_cases ADD COLUMN contribution jsonb`
  yield* sql`
    CREATE TABLE human_tallies (
      leaderboard_id uuid NOT NULL REFERENCES leaderboards (id) ON DELETE CASCADE,
      configuration_hash text NOT NULL,
      candidate_id uuid NOT NULL,
      common boolean NOT NULL,
      correct integer NOT NULL,
      total integer NOT NULL,
      cost_sum double precision NOT NULL,
      cost_samples integer NOT NULL,
      cost_missing integer NOT NULL,
      technical_errors integer NOT NULL,
      PRIMARY KEY (leaderboard_id, configuration_hash, candidate_id, common)
    )`
  yield* sql`
    CREATE TABLE human_cohorts (
      leaderboard_id uuid NOT NULL REFERENCES leaderboards (id) ON DELETE CASCADE,
      configuration_hash text NOT NULL,
      cases integer NOT NULL DEFAULT 0,
      confirmed integer NOT NULL DEFAULT 0,
      comparable integer NOT NULL DEFAULT 0,
      PRIMARY KEY (leaderboard_id, configuration_hash)
    )`
})
