import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** An invite mail written to the log (no SMTP_URL) is `logged`, so nobody takes it for sent. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE invites
      DROP CONSTRAINT invites_mail_status_check,
      ADD CONSTRAINT invites_mail_status_check
        CHECK (mail_status IN ('queued', 'sent', 'logged', 'failed', 'skipped'))`
})
