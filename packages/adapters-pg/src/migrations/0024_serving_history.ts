import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A leaderboard's serving history and serving policy, and a run's serving decision.
 *
 * - `leaderboard_serving_history`: one row per decision about what a leaderboard serves (a manual
 *   choice, a run's or human ranking's decision, keep included, a rollback), with who made it
 *   (`actor`) and why (`evidence`, `reason`). Rows are immutable as model versions are: a trigger
 *   refuses any UPDATE, and a DELETE while the leaderboard's row exists. Leaderboards are deleted
 *   softly, so the rows outlive that (for audit) and go only with their workspace, whose cascade
 *   removes the leaderboard first: hence no foreign key to the workspace. Candidates are deleted for
 *   real, so the candidate ids are plain ids, not foreign keys: history names removed ones too.
 * - `leaderboards.serving_policy`: the policy as set (null: the defaults).
 * - `runs.serving_decision`: what a run decided about serving (null: none recorded).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE leaderboards ADD COLUMN serving_policy jsonb`
  yield* sql`ALTER TABLE runs ADD COLUMN serving_decision jsonb`
  yield* sql`
    CREATE TABLE leaderboard_serving_history (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL,
      leaderboard_id uuid NOT NULL REFERENCES leaderboards (id) ON DELETE CASCADE,
      at timestamptz NOT NULL,
      kind text NOT NULL CHECK (kind IN ('manual', 'run', 'human', 'rollback')),
      from_candidate_id uuid,
      to_candidate_id uuid,
      actor jsonb NOT NULL CHECK (actor->>'type' IN ('user', 'api_token', 'system')),
      evidence jsonb,
      reason text
    )`
  yield* sql`
    CREATE INDEX leaderboard_serving_history_leaderboard_idx
    ON leaderboard_serving_history (leaderboard_id, at DESC, id DESC)`
  yield* sql`
    CREATE FUNCTION podium_serving_history_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        IF EXISTS (SELECT 1 FROM leaderboards WHERE id = OLD.leaderboard_id) THEN
          RAISE EXCEPTION 'serving history entry % is never deleted', OLD.id USING ERRCODE = 'restrict_violation';
        END IF;
        RETURN OLD;
      END IF;
      RAISE EXCEPTION 'serving history entry % is immutable', OLD.id USING ERRCODE = 'restrict_violation';
    END
    $$`
  yield* sql`
    CREATE TRIGGER leaderboard_serving_history_immutable
    BEFORE UPDATE OR DELETE ON leaderboard_serving_history FOR EACH ROW
    EXECUTE FUNCTION podium_serving_history_immutable()`
})
