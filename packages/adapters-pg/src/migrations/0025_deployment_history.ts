import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A model's deployment history and its gate policy.
 *
 * - `model_deployment_history`: one row per change of what a model serves (a deploy, a stop, a
 *   fine-tune gate's decision, a rollback), with who made it (`actor`) and why (`evidence`,
 *   `reason`). Rows are immutable as versions are: a trigger refuses any UPDATE, and a DELETE while
 *   the model's row exists (models are deleted softly, so the rows go only with their workspace,
 *   whose cascade removes the model first: hence no foreign key to the workspace).
 *   A fine-tune run's gate is recorded once (a unique index on the run named by a gate's actor).
 * - `models.gate_policy`: the model's gate policy as set (null: the defaults).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE models ADD COLUMN gate_policy jsonb`
  yield* sql`
    CREATE TABLE model_deployment_history (
      id uuid PRIMARY KEY,
      workspace_id uuid NOT NULL,
      model_id uuid NOT NULL REFERENCES models (id) ON DELETE CASCADE,
      at timestamptz NOT NULL,
      kind text NOT NULL CHECK (kind IN ('deploy', 'stop', 'gate', 'rollback')),
      from_version_id uuid,
      to_version_id uuid,
      actor jsonb NOT NULL CHECK (actor->>'type' IN ('user', 'api_token', 'system')),
      evidence jsonb,
      reason text
    )`
  yield* sql`CREATE INDEX model_deployment_history_model_idx ON model_deployment_history (model_id, at DESC, id DESC)`
  yield* sql`
    CREATE UNIQUE INDEX model_deployment_history_gate_idx ON model_deployment_history ((actor->>'fine_tune_run_id'))
    WHERE kind = 'gate'`
  yield* sql`
    CREATE FUNCTION podium_deployment_history_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        IF EXISTS (SELECT 1 FROM models WHERE id = OLD.model_id) THEN
          RAISE EXCEPTION 'deployment history entry % is never deleted', OLD.id USING ERRCODE = 'restrict_violation';
        END IF;
        RETURN OLD;
      END IF;
      RAISE EXCEPTION 'deployment history entry % is immutable', OLD.id USING ERRCODE = 'restrict_violation';
    END
    $$`
  yield* sql`
    CREATE TRIGGER model_deployment_history_immutable BEFORE UPDATE OR DELETE ON model_deployment_history FOR EACH ROW
    EXECUTE FUNCTION podium_deployment_history_immutable()`
})
