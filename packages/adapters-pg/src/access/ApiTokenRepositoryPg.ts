import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { ApiToken, ApiTokenRepository } from "@podium/domain/access"
import { ChangeFeed } from "../ChangeFeedPg.ts"
import { NullableTimestamp, Timestamp, toDate, toDateOrNull } from "../Rows.ts"

/** The domain's fields, with timestamps as the driver returns them (Date). */
const TokenRow = Schema.Struct({
  ...ApiToken.fields,
  expires_at: NullableTimestamp,
  created_at: Timestamp,
  last_used_at: NullableTimestamp,
  revoked_at: NullableTimestamp
})

/** How stale last_used_at may get before a request writes it again. */
const touchInterval = "1 minute"

const layer = Layer.effect(
  ApiTokenRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Every authenticated request looks its token up: keep a copy, keyed by secret hash.
    const copies = (yield* ChangeFeed).copies<ApiToken>("api_token", { tagOf: (token) => token.id })
    const columns = sql`id, workspace_id, name, display_prefix, scopes, expires_at, budget_limit::float8 AS budget_limit,
      budget_reset_interval, created_by, created_at, last_used_at, revoked_at`
    const toToken = Option.map((row: typeof TokenRow.Type) => new ApiToken(row))

    const byHash = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: TokenRow,
      execute: (hash) => sql`SELECT ${columns} FROM api_tokens WHERE secret_hash = ${hash}`
    })
    const byId = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: TokenRow,
      execute: (id) => sql`SELECT ${columns} FROM api_tokens WHERE id = ${id}`
    })
    const byWorkspace = SqlSchema.findAll({
      Request: Schema.String,
      Result: TokenRow,
      execute: (workspaceId) =>
        sql`SELECT ${columns} FROM api_tokens WHERE workspace_id = ${workspaceId} ORDER BY created_at DESC, id DESC`
    })
    const revoke = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.String, now: Schema.Date }),
      Result: TokenRow,
      execute: ({ id, now }) =>
        sql`UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ${now}) WHERE id = ${id} RETURNING ${columns}`
    })

    const dropCopy = (id: string) => Effect.sync(() => copies.drop(id))

    return ApiTokenRepository.of({
      insert: (token, secretHash) =>
        sql`INSERT INTO api_tokens (id, workspace_id, name, display_prefix, secret_hash, scopes, expires_at,
              budget_limit, budget_reset_interval, created_by, created_at)
            VALUES (${token.id}, ${token.workspace_id}, ${token.name}, ${token.display_prefix}, ${secretHash},
              ${[...token.scopes]}::text[], ${toDateOrNull(token.expires_at)}, ${token.budget_limit},
              ${token.budget_reset_interval}, ${token.created_by}, ${toDate(token.created_at)})`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      findBySecretHash: (hash) => copies.get(hash, byHash(hash).pipe(Effect.map(toToken), Effect.orDie)),
      find: (id) => byId(id).pipe(Effect.map(toToken), Effect.orDie),
      list: (workspaceId) =>
        byWorkspace(workspaceId).pipe(Effect.map((rows) => rows.map((row) => new ApiToken(row))), Effect.orDie),
      revoke: (id, now) =>
        revoke({ id, now: toDate(now) }).pipe(Effect.map(toToken), Effect.orDie, Effect.ensuring(dropCopy(id))),
      remove: (id) =>
        sql`DELETE FROM api_tokens WHERE id = ${id} RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie,
          Effect.ensuring(dropCopy(id))
        ),
      touch: (id, now) =>
        sql`UPDATE api_tokens SET last_used_at = ${toDate(now)}
            WHERE id = ${id} AND (last_used_at IS NULL OR last_used_at < ${toDate(now)}::timestamptz - ${touchInterval}::interval)`
          .pipe(
            Effect.orDie,
            // the copy must know, or every request through it would write again
            Effect.andThen(Effect.sync(() => copies.update(id, (token) => new ApiToken({ ...token, last_used_at: now }))))
          )
    })
  })
)

export const ApiTokenRepositoryPg = { layer }
