import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Sessions served from instance-local copies: every committed change a session request reads is
 * announced on the change feed — a user (`user:<id>`; seeing a user again is not a change), a
 * user's memberships (`membership:<user_id>`), the invites of an email (`invite:<lower(email)>`;
 * mail delivery bookkeeping is not a change).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TRIGGER users_changed AFTER UPDATE ON users FOR EACH ROW
    WHEN ((to_jsonb(OLD) - 'last_seen_at') IS DISTINCT FROM (to_jsonb(NEW) - 'last_seen_at'))
    EXECUTE FUNCTION podium_announce_change('user', 'id')`
  yield* sql`
    CREATE TRIGGER users_deleted AFTER DELETE ON users FOR EACH ROW
    EXECUTE FUNCTION podium_announce_change('user', 'id')`
  yield* sql`
    CREATE TRIGGER memberships_changed AFTER INSERT OR UPDATE OR DELETE ON memberships FOR EACH ROW
    EXECUTE FUNCTION podium_announce_change('membership', 'user_id')`
  yield* sql`
    CREATE FUNCTION podium_announce_invite() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('podium_changes', 'invite:' || lower(CASE WHEN TG_OP = 'DELETE' THEN OLD.email ELSE NEW.email END));
      IF TG_OP = 'UPDATE' AND lower(OLD.email) IS DISTINCT FROM lower(NEW.email) THEN
        PERFORM pg_notify('podium_changes', 'invite:' || lower(OLD.email));
      END IF;
      RETURN NULL;
    END
    $$`
  yield* sql`
    CREATE TRIGGER invites_added AFTER INSERT OR DELETE ON invites FOR EACH ROW
    EXECUTE FUNCTION podium_announce_invite()`
  yield* sql`
    CREATE TRIGGER invites_changed AFTER UPDATE ON invites FOR EACH ROW
    WHEN ((to_jsonb(OLD) - ARRAY['mail_status', 'mail_attempts', 'mail_last_error', 'mail_sent_at'])
      IS DISTINCT FROM (to_jsonb(NEW) - ARRAY['mail_status', 'mail_attempts', 'mail_last_error', 'mail_sent_at']))
    EXECUTE FUNCTION podium_announce_invite()`
})
