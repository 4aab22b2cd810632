import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/** Invite mails are delivered by a durable workflow; the invite keeps the outcome. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE invites
      ADD COLUMN mail_status text NOT NULL DEFAULT 'queued'
        CHECK (mail_status IN ('queued', 'sent', 'failed', 'skipped')),
      ADD COLUMN mail_attempts integer NOT NULL DEFAULT 0 CHECK (mail_attempts >= 0),
      ADD COLUMN mail_last_error text,
      ADD COLUMN mail_sent_at timestamptz`
})
