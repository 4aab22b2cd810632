import { BigDecimal, DateTime, Effect, Layer, Option, Result, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { type AmendedToken, ApiToken, ApiTokenRepository } from "@podium/domain/access"
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

    const locked = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: TokenRow,
      execute: (id) => sql`SELECT ${columns} FROM api_tokens WHERE id = ${id} FOR UPDATE`
    })

    /** The old window's spend row and reservations under the new window's start; the new one's old row goes. */
    const moveSpend = (id: string, from: DateTime.Utc, to: DateTime.Utc) =>
      Effect.gen(function*() {
        const [source, target] = [toDate(from), toDate(to)]
        yield* sql`DELETE FROM token_spend WHERE token_id = ${id} AND window_start = ${target}`
        yield* sql`INSERT INTO token_spend (token_id, window_start, settled_usd, reserved_usd, unpriced_in_flight)
                   SELECT token_id, ${target}, settled_usd, reserved_usd, unpriced_in_flight FROM token_spend
                   WHERE token_id = ${id} AND window_start = ${source}`
        // reservations in flight settle into the new window, so what they hold is released there
        yield* sql`UPDATE token_reservations SET window_start = ${target} WHERE token_id = ${id} AND window_start = ${source}`
        yield* sql`DELETE FROM token_spend WHERE token_id = ${id} AND window_start = ${source}`
      })

    /** Exact money from Postgres numeric text, without trailing zeros. */
    const decimal = (text: string) => BigDecimal.normalize(BigDecimal.fromStringUnsafe(text))

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
      amend: <E>(id: string, change: (current: ApiToken) => Result.Result<AmendedToken, E>) =>
        sql.withTransaction(Effect.gen(function*() {
          const current = yield* locked(id)
          if (Option.isNone(current)) return Option.none<Result.Result<AmendedToken, E>>()
          const amended = change(new ApiToken(current.value))
          if (Result.isFailure(amended)) return Option.some(amended)
          const { spendMove, token } = amended.success
          yield* sql`UPDATE api_tokens SET name = ${token.name}, expires_at = ${toDateOrNull(token.expires_at)},
                       budget_limit = ${token.budget_limit}, budget_reset_interval = ${token.budget_reset_interval}
                     WHERE id = ${id}`
          if (spendMove !== null) yield* moveSpend(id, spendMove.from, spendMove.to)
          return Option.some(amended)
        })).pipe(
          Effect.orDie,
          Effect.ensuring(dropCopy(id)),
          Effect.flatMap((found): Effect.Effect<Option.Option<ApiToken>, E> =>
            Option.isNone(found)
              ? Effect.succeed(Option.none())
              : Result.isFailure(found.value)
              ? Effect.fail(found.value.failure)
              : Effect.succeed(Option.some(found.value.success.token))
          )
        ),
      spend: (windows) =>
        Effect.gen(function*() {
          if (windows.length === 0) return []
          const rows = yield* sql<{ token_id: string; window_start: Date; settled: string; reserved: string }>`
            SELECT s.token_id, s.window_start, s.settled_usd::text AS settled, s.reserved_usd::text AS reserved
            FROM token_spend s
            JOIN unnest(${windows.map((w) => w.tokenId)}::uuid[], ${windows.map((w) => DateTime.formatIso(w.windowStart))}::timestamptz[])
              AS k (token_id, window_start) ON s.token_id = k.token_id AND s.window_start = k.window_start`
          const found = new Map(rows.map((r) => [`${r.token_id}@${r.window_start.getTime()}`, r]))
          return windows.map(({ tokenId, windowStart }) => {
            const row = found.get(`${tokenId}@${DateTime.toEpochMillis(windowStart)}`)
            return row === undefined
              ? { settled: BigDecimal.fromBigInt(0n), reserved: BigDecimal.fromBigInt(0n) }
              : { settled: decimal(row.settled), reserved: decimal(row.reserved) }
          })
        }).pipe(Effect.orDie),
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
