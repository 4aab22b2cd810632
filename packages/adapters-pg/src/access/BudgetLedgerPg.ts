import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { BudgetLedger, type Reserved } from "@podium/domain/access"
import { IdGenerator, ReservationId } from "@podium/domain/shared"
import { toDate } from "../Rows.ts"

/** Money as Postgres numeric text: JavaScript's shortest decimal form of the number, exact from there on. */
const money = (usd: number) => String(usd)

const layer = Layer.effect(
  BudgetLedger,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ids = yield* IdGenerator

    /**
     * Takes a reservation off the books and adds its actual cost (null: unknown), once; a priced
     * call of known cost tells its subject's trust whether it kept its bound, and distrust, once
     * written, is never overwritten.
     */
    const release = (id: string, actual: number | null) =>
      sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql<{ token_id: string; window_start: Date; amount_usd: string; unpriced: boolean; subject: string | null }>`
          DELETE FROM token_reservations WHERE id = ${id} RETURNING token_id, window_start, amount_usd, unpriced, subject`
        const row = rows[0]
        if (row === undefined) return false
        yield* sql`UPDATE token_spend SET reserved_usd = reserved_usd - ${row.amount_usd}::numeric,
                     settled_usd = settled_usd + ${money(actual ?? 0)}::numeric,
                     unpriced_in_flight = unpriced_in_flight - ${row.unpriced ? 1 : 0}
                   WHERE token_id = ${row.token_id} AND window_start = ${row.window_start}`
        if (row.subject !== null && actual !== null) {
          yield* sql`INSERT INTO token_price_trust (token_id, subject, trusted)
                     VALUES (${row.token_id}, ${row.subject}, ${money(actual)}::numeric <= ${row.amount_usd}::numeric)
                     ON CONFLICT (token_id, subject) DO UPDATE SET trusted = false WHERE NOT excluded.trusted`
        }
        return true
      }))

    return BudgetLedger.of({
      reserve: ({ amount, expiresAt, limit, subject, tokenId, unpriced, windowStart }) =>
        sql.withTransaction(Effect.gen(function*() {
          const id = yield* ids.make(ReservationId)
          const window = toDate(windowStart)
          const trust = unpriced ? [] : yield* sql<{ trusted: boolean }>`
            SELECT trusted FROM token_price_trust WHERE token_id = ${tokenId} AND subject = ${subject}`
          // A trust read just before another call's distrust commits lets this call run beside that
          // one, which was in flight already: the same as had it come a moment earlier.
          const alone = unpriced || trust[0]?.trusted !== true
          yield* sql`INSERT INTO token_spend (token_id, window_start) VALUES (${tokenId}, ${window}) ON CONFLICT DO NOTHING`
          // The check and the hold are one statement: the row lock serialises concurrent calls.
          const held = yield* sql`
            UPDATE token_spend SET reserved_usd = reserved_usd + ${money(amount)}::numeric,
                unpriced_in_flight = unpriced_in_flight + ${alone ? 1 : 0}
            WHERE token_id = ${tokenId} AND window_start = ${window}
              AND settled_usd + reserved_usd < ${money(limit)}::numeric
              AND unpriced_in_flight = 0
              AND (${!alone} OR reserved_usd = 0)
            RETURNING 1`
          if (held.length === 0) {
            const [row] = yield* sql<{ spent: string }>`
              SELECT settled_usd + reserved_usd AS spent FROM token_spend WHERE token_id = ${tokenId} AND window_start = ${window}`
            const spent = Number(row?.spent ?? 0)
            const refused: Reserved = spent >= limit ? { _tag: "Exceeded", spent } : { _tag: "Busy" }
            return refused
          }
          yield* sql`INSERT INTO token_reservations (id, token_id, window_start, amount_usd, unpriced, subject, expires_at)
                     VALUES (${id}, ${tokenId}, ${window}, ${money(amount)}::numeric, ${alone}, ${unpriced ? null : subject},
                             ${toDate(expiresAt)})`
          const reserved: Reserved = { _tag: "Held", reservation: id }
          return reserved
        })).pipe(Effect.orDie),
      settle: (id, actual) => release(id, actual).pipe(Effect.asVoid, Effect.orDie),
      sweep: (now) =>
        Effect.gen(function*() {
          const expired = yield* sql<{ id: string }>`SELECT id FROM token_reservations WHERE expires_at <= ${toDate(now)}`
          let released = 0
          for (const { id } of expired) if (yield* release(id, null)) released++
          return released
        }).pipe(Effect.orDie)
    })
  })
)

export const BudgetLedgerPg = { layer }
