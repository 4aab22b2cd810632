import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { BudgetLedger } from "@podium/domain/ports/BudgetLedger"
import { IdGenerator } from "@podium/domain/ports/IdGenerator"
import { toDate } from "./Rows.ts"

export const BudgetLedgerPg = Layer.effect(
  BudgetLedger,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ids = yield* IdGenerator

    /** Takes a reservation's amount off the books and adds its actual cost, once. */
    const release = (id: string, actual: number) =>
      sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql<{ token_id: string; window_start: Date; amount_usd: number }>`
          DELETE FROM token_reservations WHERE id = ${id} RETURNING token_id, window_start, amount_usd`
        const row = rows[0]
        if (row === undefined) return false
        yield* sql`UPDATE token_spend SET reserved_usd = reserved_usd - ${row.amount_usd},
                     settled_usd = settled_usd + ${actual}
                   WHERE token_id = ${row.token_id} AND window_start = ${row.window_start}`
        return true
      }))

    return BudgetLedger.of({
      reserve: ({ amount, expiresAt, limit, tokenId, windowStart }) =>
        sql.withTransaction(Effect.gen(function*() {
          const id = yield* ids.next
          yield* sql`INSERT INTO token_spend (token_id, window_start) VALUES (${tokenId}, ${toDate(windowStart)})
                     ON CONFLICT DO NOTHING`
          // The check and the hold are one statement: the row lock serialises concurrent calls.
          // A call estimated to cost nothing is never blocked; what it really costs is settled.
          const held = yield* sql<{ spent: number }>`
            UPDATE token_spend SET reserved_usd = reserved_usd + ${amount}
            WHERE token_id = ${tokenId} AND window_start = ${toDate(windowStart)}
              AND (${amount} = 0 OR settled_usd + reserved_usd < ${limit})
            RETURNING settled_usd + reserved_usd AS spent`
          if (held.length === 0) {
            const [row] = yield* sql<{ spent: number }>`
              SELECT settled_usd + reserved_usd AS spent FROM token_spend
              WHERE token_id = ${tokenId} AND window_start = ${toDate(windowStart)}`
            return { reservation: Option.none(), spent: row?.spent ?? 0 }
          }
          yield* sql`INSERT INTO token_reservations (id, token_id, window_start, amount_usd, expires_at)
                     VALUES (${id}, ${tokenId}, ${toDate(windowStart)}, ${amount}, ${toDate(expiresAt)})`
          return { reservation: Option.some(id), spent: held[0]!.spent }
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
