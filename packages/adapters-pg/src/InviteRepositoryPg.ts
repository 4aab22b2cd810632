import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { Invite, InviteRepository } from "@podium/domain/access"
import { NullableTimestamp, Timestamp, toDate, toDateOrNull } from "./Rows.ts"

/** The domain's fields, with timestamps as the driver returns them (Date). */
const InviteRow = Schema.Struct({
  ...Invite.fields,
  created_at: Timestamp,
  expires_at: Timestamp,
  accepted_at: NullableTimestamp,
  mail_sent_at: NullableTimestamp
})
const toInvite = (row: typeof InviteRow.Type) => new Invite(row)

const layer = Layer.effect(
  InviteRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`id, workspace_id, email, role, status, invited_by, redirect_to, created_at, expires_at,
      accepted_at, accepted_by, mail_status, mail_attempts, mail_last_error, mail_sent_at`

    const upsert = SqlSchema.findOneOption({
      Request: InviteRow,
      Result: InviteRow,
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
      Result: InviteRow,
      execute: ({ now, workspaceId }) =>
        sql`SELECT ${columns} FROM invites
            WHERE workspace_id = ${workspaceId} AND status = 'pending' AND expires_at > ${now}
            ORDER BY created_at DESC, id DESC`
    })
    const pendingForEmail = SqlSchema.findAll({
      Request: Schema.Struct({ email: Schema.String, now: Schema.Date }),
      Result: InviteRow,
      execute: ({ email, now }) =>
        sql`SELECT ${columns} FROM invites
            WHERE lower(email) = lower(${email}) AND status = 'pending' AND expires_at > ${now}`
    })

    return InviteRepository.of({
      upsertPending: (invite) =>
        upsert(invite).pipe(Effect.map((o) => toInvite(Option.getOrThrow(o))), Effect.orDie),
      find: (workspaceId, id) => find({ workspaceId, id }).pipe(Effect.map(Option.map(toInvite)), Effect.orDie),
      listPending: (workspaceId, now) =>
        listPending({ workspaceId, now: toDate(now) }).pipe(Effect.map((rows) => rows.map(toInvite)), Effect.orDie),
      pendingForEmail: (email, now) =>
        pendingForEmail({ email, now: toDate(now) }).pipe(Effect.map((rows) => rows.map(toInvite)), Effect.orDie),
      accept: (invite, userId, role) =>
        sql.withTransaction(Effect.gen(function*() {
          const settled = yield* sql`UPDATE invites SET status = 'accepted', accepted_at = ${toDateOrNull(invite.accepted_at)},
              accepted_by = ${userId} WHERE id = ${invite.id} AND status = 'pending' RETURNING id`
          if (settled.length === 0) return false
          yield* sql`INSERT INTO memberships (workspace_id, user_id, role, joined_at)
                     VALUES (${invite.workspace_id}, ${userId}, ${role}, ${toDateOrNull(invite.accepted_at)})
                     ON CONFLICT DO NOTHING`
          return true
        })).pipe(Effect.orDie),
      settle: (invite) =>
        sql`UPDATE invites SET status = ${invite.status}, accepted_at = ${toDateOrNull(invite.accepted_at)},
              accepted_by = ${invite.accepted_by}
            WHERE id = ${invite.id} AND status = 'pending' RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
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
