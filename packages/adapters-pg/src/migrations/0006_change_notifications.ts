import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Every committed change to a row that instances keep a copy of (ChangeFeedPg) is announced on the
 * `podium_changes` channel as `<topic>:<key>`. Triggers rather than application code, so a change
 * made by any writer (another instance, a cascade, an operator's psql) reaches every copy.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION podium_announce_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      -- TG_ARGV: the topic, then the column that names the key
      PERFORM pg_notify('podium_changes', TG_ARGV[0] || ':' ||
        (CASE WHEN TG_OP = 'DELETE' THEN to_jsonb(OLD) ELSE to_jsonb(NEW) END ->> TG_ARGV[1]));
      RETURN NULL;
    END
    $$`
  // Recording use (last_used_at) is not a change anyone caches.
  yield* sql`
    CREATE TRIGGER api_tokens_changed AFTER UPDATE ON api_tokens FOR EACH ROW
    WHEN ((to_jsonb(OLD) - 'last_used_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_used_at'))
    EXECUTE FUNCTION podium_announce_change('api_token', 'id')`
  yield* sql`
    CREATE TRIGGER api_tokens_deleted AFTER DELETE ON api_tokens FOR EACH ROW
    EXECUTE FUNCTION podium_announce_change('api_token', 'id')`
  yield* sql`
    CREATE TRIGGER leaderboards_changed AFTER UPDATE OR DELETE ON leaderboards FOR EACH ROW
    EXECUTE FUNCTION podium_announce_change('leaderboard', 'id')`
  yield* sql`
    CREATE TRIGGER leaderboard_models_changed AFTER INSERT OR UPDATE OR DELETE ON leaderboard_models FOR EACH ROW
    EXECUTE FUNCTION podium_announce_change('leaderboard', 'leaderboard_id')`
  yield* sql`
    CREATE TRIGGER integrations_changed AFTER INSERT OR UPDATE OR DELETE ON integrations FOR EACH ROW
    EXECUTE FUNCTION podium_announce_change('integration', 'workspace_id')`
})
