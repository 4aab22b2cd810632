import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Deployments: a version's deployment options and failure reason live beside its status (the
 * version itself stays immutable), and every change a model's serving copy depends on (the model,
 * its versions' deployments, its webhook) is announced on the change feed as `model:<model_id>`.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE model_versions ADD COLUMN deployment jsonb, ADD COLUMN deployment_error text`
  yield* sql`
    CREATE OR REPLACE FUNCTION podium_model_version_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        IF EXISTS (SELECT 1 FROM models WHERE id = OLD.model_id) THEN
          RAISE EXCEPTION 'model version % is never deleted', OLD.id USING ERRCODE = 'restrict_violation';
        END IF;
        RETURN OLD;
      END IF;
      IF (to_jsonb(NEW) - 'deployment_status' - 'deployed_at' - 'deployment' - 'deployment_error') IS DISTINCT FROM
         (to_jsonb(OLD) - 'deployment_status' - 'deployed_at' - 'deployment' - 'deployment_error') THEN
        RAISE EXCEPTION 'model version % is immutable: only its deployment changes', OLD.id
          USING ERRCODE = 'restrict_violation';
      END IF;
      RETURN NEW;
    END
    $$`
  yield* sql`
    CREATE TRIGGER models_changed AFTER UPDATE OR DELETE ON models FOR EACH ROW
    EXECUTE FUNCTION podium_announce_change('model', 'id')`
  yield* sql`
    CREATE TRIGGER model_versions_changed AFTER INSERT OR UPDATE ON model_versions FOR EACH ROW
    EXECUTE FUNCTION podium_announce_change('model', 'model_id')`
  yield* sql`
    CREATE TRIGGER model_webhooks_changed AFTER INSERT OR UPDATE OR DELETE ON model_webhooks FOR EACH ROW
    EXECUTE FUNCTION podium_announce_change('model', 'model_id')`
})
