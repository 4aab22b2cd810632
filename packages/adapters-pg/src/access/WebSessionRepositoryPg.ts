import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { isWebSessionLive, WebSession, WebSessionRepository } from "@podium/domain/access"
import { Timestamp, toDate } from "../Rows.ts"

/** The domain's fields, with timestamps as the driver returns them (Date). */
const SessionRow = Schema.Struct({
  ...WebSession.fields,
  created_at: Timestamp,
  expires_at: Timestamp
})

const layer = Layer.effect(
  WebSessionRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const byHash = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: SessionRow,
      execute: (hash) =>
        sql`SELECT user_id, subject, email, email_verified, created_at, expires_at FROM web_sessions WHERE secret_hash = ${hash}`
    })
    const removeIfEnded = (hash: string, now: Date) =>
      sql`DELETE FROM web_sessions WHERE secret_hash = ${hash} AND expires_at <= ${now}`.pipe(Effect.asVoid)

    return WebSessionRepository.of({
      insert: (session, secretHash) =>
        sql`INSERT INTO web_sessions (secret_hash, user_id, subject, email, email_verified, created_at, expires_at)
            VALUES (${secretHash}, ${session.user_id}, ${session.subject}, ${session.email}, ${session.email_verified},
                    ${toDate(session.created_at)}, ${toDate(session.expires_at)})`.pipe(Effect.asVoid, Effect.orDie),
      findLive: (secretHash, now) =>
        Effect.gen(function*() {
          const found = yield* byHash(secretHash)
          if (Option.isNone(found)) return Option.none<WebSession>()
          const session = new WebSession(found.value)
          if (isWebSessionLive(session, now)) return Option.some(session)
          yield* removeIfEnded(secretHash, toDate(now))
          return Option.none<WebSession>()
        }).pipe(Effect.orDie),
      remove: (secretHash) =>
        sql`DELETE FROM web_sessions WHERE secret_hash = ${secretHash} RETURNING secret_hash`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        ),
      removeEnded: (now) =>
        sql`DELETE FROM web_sessions WHERE expires_at <= ${toDate(now)} RETURNING secret_hash`.pipe(
          Effect.map((rows) => rows.length),
          Effect.orDie
        )
    })
  })
)

export const WebSessionRepositoryPg = { layer }
