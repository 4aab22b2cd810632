import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { BudgetLedger, type Reserved } from "@podium/domain/access"
import { IdGenerator } from "@podium/domain/shared"
import { toDate } from "../Rows.ts"

/** Money as Postgres numeric text: JavaScript's shortest decimal form of the number, exact from there on. */
const money = (usd: number) => String(usd)

const layer = Layer.effect(
  BudgetLedger,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ids = yield* IdGenerator

    /** Takes a reservation off the books and adds its actual cost, once. */
    const release = (id: string, actual: number) =>
      sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql<{ token_id: string; window_start: Date; amount_usd: string; unpriced: boolean }>`
          DELETE FROM token_reservations WHERE id = ${id} RETURNING token_id, window_start, amount_usd, unpriced`
        const row = rows[0]
        if (row === undefined) return false
        yield* sql`UPDATE token_spend SET reserved_usd = reserved_usd - ${row.amount_usd}::numeric,
                     settled_usd = settled_usd + ${money(actual)}::numeric,
                     unpriced_in_flight = unpriced_in_flight - ${row.unpriced ? 1 : 0}
                   WHERE token_id = ${row.token_id} AND window_start = ${row.window_start}`
        return true
      }))

    return BudgetLedger.of({
      reserve: ({ amount, expiresAt, limit, tokenId, unpriced, windowStart }) =>
        sql.withTransaction(Effect.gen(function*() {
          const id = yield* ids.next
          const window = toDate(windowStart)
          yield* sql`INSERT INTO token_spend (token_id, window_start) VALUES (${tokenId}, ${window}) ON CONFLICT DO NOTHING`
          // The check and the hold are one statement: the row lock serialises concurrent calls.
          const held = yield* sql`
            UPDATE token_spend SET reserved_usd = reserved_usd + ${money(amount)}::numeric,
                unpriced_in_flight = unpriced_in_flight + ${unpriced ? 1 : 0}
            WHERE token_id = ${tokenId} AND window_start = ${window}
              AND settled_usd + reserved_usd < ${money(limit)}::numeric
              AND unpriced_in_flight = 0
              AND (${!unpriced} OR reserved_usd = 0)
            RETURNING 1`
          if (held.length === 0) {
            const [row] = yield* sql<{ spent: string }>`
              SELECT settled_usd + reserved_usd AS spent FROM token_spend WHERE token_id = ${tokenId} AND window_start = ${window}`
            const spent = Number(row?.spent ?? 0)
            const refused: Reserved = spent >= limit ? { _tag: "Exceeded", spent } : { _tag: "Busy" }
            return refused
          }
          yield* sql`INSERT INTO token_reservations (id, token_id, window_start, amount_usd, unpriced, expires_at)
                     VALUES (${id}, ${tokenId}, ${window}, ${money(amount)}::numeric, ${unpriced}, ${toDate(expiresAt)})`
          const reserved: Reserved = { _tag: "Held", reservation: id }
          return reserved
        })).pipe(Effect.orDie),
      settle: (id, actual) => release(id, actual).pipe(Effect.asVoid, Effect.orDie),
      sweep: (now) =>
        Effect.gen(function*() {
          const expired = yield* sql<{ id: string }>`SELECT id FROM token_reservations WHERE expires_at <= ${toDate(now)}`
          let released = 0
          for (const { id } of expired) if (yield* release(id, 0)) released++
          return released
        }).pipe(Effect.orDie)
    })
  })
)

export const BudgetLedgerPg = { layer }
