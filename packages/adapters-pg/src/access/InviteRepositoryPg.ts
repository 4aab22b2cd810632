import { DateTime, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { Invite, InviteRepository, type PendingInvite, statusOf } from "@podium/domain/access"
import { UserId } from "@podium/domain/shared"
import { ChangeFeed } from "../ChangeFeedPg.ts"
import { NullableTimestamp, Timestamp, toDate } from "../Rows.ts"

/** The fields every invite has, with timestamps as the driver returns them (Date). */
const { _tag, ...pendingFields } = Invite.cases.Pending.fields
const fields = { ...pendingFields, created_at: Timestamp, expires_at: Timestamp, mail_sent_at: NullableTimestamp }
const PendingRow = Schema.Struct(fields)
const toPending = (row: typeof PendingRow.Type) => Invite.cases.Pending.make(row)

/** A row is one state of the union: `status` says which, and only an accepted one has `accepted_*`. */
const InviteRow = Schema.Union([
  Schema.Struct({ ...fields, status: Schema.Literals(["pending", "revoked", "expired"]) }),
  Schema.Struct({ ...fields, status: Schema.Literal("accepted"), accepted_at: Timestamp, accepted_by: UserId })
])

const toInvite = (row: typeof InviteRow.Type): Invite => {
  if (row.status === "accepted") {
    const { status, ...accepted } = row
    return Invite.cases.Accepted.make(accepted)
  }
  const { status, ...invite } = row
  switch (status) {
    case "pending":
      return toPending(invite)
    case "revoked":
      return Invite.cases.Revoked.make(invite)
    case "expired":
      return Invite.cases.Expired.make(invite)
  }
}

const layer = Layer.effect(
  InviteRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`id, workspace_id, email, role, status, invited_by, redirect_to, created_at, expires_at,
      accepted_at, accepted_by, mail_status, mail_attempts, mail_last_error, mail_sent_at`

    const upsert = SqlSchema.findOneOption({
      Request: PendingRow,
      Result: PendingRow,
      execute: (i) =>
        sql`INSERT INTO invites (id, workspace_id, email, role, status, invited_by, redirect_to, created_at, expires_at)
            VALUES (${i.id}, ${i.workspace_id}, ${i.email}, ${i.role}, 'pending', ${i.invited_by}, ${i.redirect_to},
              ${i.created_at}, ${i.expires_at})
            ON CONFLICT (workspace_id, lower(email)) WHERE status = 'pending'
            DO UPDATE SET role = EXCLUDED.role, invited_by = EXCLUDED.invited_by, redirect_to = EXCLUDED.redirect_to,
              expires_at = EXCLUDED.expires_at, mail_status = 'queued', mail_attempts = 0, mail_last_error = NULL,
              mail_sent_at = NULL
            RETURNING ${columns}`
    })
    const find = SqlSchema.findOneOption({
      Request: Schema.Struct({ workspaceId: Schema.String, id: Schema.String }),
      Result: InviteRow,
      execute: ({ id, workspaceId }) =>
        sql`SELECT ${columns} FROM invites WHERE id = ${id} AND workspace_id = ${workspaceId}`
    })
    const listPending = SqlSchema.findAll({
      Request: Schema.Struct({ workspaceId: Schema.String, now: Schema.Date }),
      Result: PendingRow,
      execute: ({ now, workspaceId }) =>
        sql`SELECT ${columns} FROM invites
            WHERE workspace_id = ${workspaceId} AND status = 'pending' AND expires_at > ${now}
            ORDER BY created_at DESC, id DESC`
    })
    // Every session request with a verified email asks for that email's pending invites: keep a
    // copy per email (lower case), expiry applied on reading, dropped on every announced change.
    const invitesByEmail = (yield* ChangeFeed).copies<{ readonly email: string; readonly pending: ReadonlyArray<PendingInvite> }>(
      "invite",
      { tagOf: (copy) => copy.email }
    )
    const pendingForEmail = SqlSchema.findAll({
      Request: Schema.String,
      Result: PendingRow,
      execute: (email) => sql`SELECT ${columns} FROM invites WHERE lower(email) = ${email} AND status = 'pending'`
    })
    /** Writes drop this instance's copy of the email's invites at once (other instances hear of it). */
    const dropping = (email: string) => Effect.ensuring(Effect.sync(() => invitesByEmail.drop(email.toLowerCase())))

    return InviteRepository.of({
      upsertPending: (invite) =>
        upsert(invite).pipe(
          Effect.map((row) => toPending(Option.getOrThrow(row))),
          Effect.orDie,
          dropping(invite.email)
        ),
      find: (workspaceId, id) => find({ workspaceId, id }).pipe(Effect.map(Option.map(toInvite)), Effect.orDie),
      listPending: (workspaceId, now) =>
        listPending({ workspaceId, now: toDate(now) }).pipe(Effect.map((rows) => rows.map(toPending)), Effect.orDie),
      pendingForEmail: (email, now) => {
        const key = email.toLowerCase()
        return invitesByEmail.get(
          key,
          pendingForEmail(key).pipe(Effect.map((rows) => Option.some({ email: key, pending: rows.map(toPending) })), Effect.orDie)
        ).pipe(Effect.map((copy) =>
          Option.isSome(copy) ? copy.value.pending.filter((invite) => DateTime.isGreaterThan(invite.expires_at, now)) : []
        ))
      },
      accept: (invite) =>
        sql.withTransaction(Effect.gen(function*() {
          const settled = yield* sql`UPDATE invites SET status = 'accepted', accepted_at = ${toDate(invite.accepted_at)},
              accepted_by = ${invite.accepted_by} WHERE id = ${invite.id} AND status = 'pending' RETURNING id`
          if (settled.length === 0) return false
          yield* sql`INSERT INTO memberships (workspace_id, user_id, role, joined_at)
                     VALUES (${invite.workspace_id}, ${invite.accepted_by}, ${invite.role}, ${toDate(invite.accepted_at)})
                     ON CONFLICT DO NOTHING`
          return true
        })).pipe(Effect.orDie, dropping(invite.email)),
      settle: (invite) =>
        sql`UPDATE invites SET status = ${statusOf(invite)} WHERE id = ${invite.id} AND status = 'pending' RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie,
          dropping(invite.email)
        ),
      recordMail: (id, attempt) =>
        sql`UPDATE invites SET mail_status = ${attempt.status}, mail_attempts = ${attempt.attempts},
              mail_last_error = ${attempt.lastError},
              mail_sent_at = CASE WHEN ${attempt.status} = 'sent' THEN ${toDate(attempt.at)} ELSE mail_sent_at END
            WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie),
      expireOverdue: (now) =>
        sql`UPDATE invites SET status = 'expired' WHERE status = 'pending' AND expires_at <= ${toDate(now)} RETURNING id`
          .pipe(Effect.map((rows) => rows.length), Effect.orDie)
    })
  })
)

export const InviteRepositoryPg = { layer }
