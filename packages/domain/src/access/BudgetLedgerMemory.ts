import { BigDecimal, DateTime, Effect, Layer, Ref } from "effect"
import { BudgetLedger, type Reserved } from "./BudgetLedger.ts"

/** Money as exact decimals from JavaScript's shortest form of each number, as the Postgres adapter stores it. */
const money = BigDecimal.fromNumberUnsafe

interface Spend {
  readonly settled: BigDecimal.BigDecimal
  readonly reserved: BigDecimal.BigDecimal
  readonly unpricedInFlight: number
}

interface Reservation {
  readonly spendKey: string
  readonly amount: BigDecimal.BigDecimal
  readonly unpriced: boolean
  readonly expiresAt: DateTime.Utc
}

interface State {
  /** Per token and window start. */
  readonly spend: ReadonlyMap<string, Spend>
  readonly reservations: ReadonlyMap<string, Reservation>
  readonly issued: number
}

const nothingSpent: Spend = { settled: money(0), reserved: money(0), unpricedInFlight: 0 }

const spentOf = (spend: Spend) => BigDecimal.sum(spend.settled, spend.reserved)

/** Takes a reservation off the books and adds its actual cost, once. */
const release = (state: State, id: string, actual: BigDecimal.BigDecimal): State => {
  const reservation = state.reservations.get(id)
  if (reservation === undefined) return state
  const spend = state.spend.get(reservation.spendKey) ?? nothingSpent
  const reservations = new Map(state.reservations)
  reservations.delete(id)
  return {
    ...state,
    reservations,
    spend: new Map(state.spend).set(reservation.spendKey, {
      settled: BigDecimal.sum(spend.settled, actual),
      reserved: BigDecimal.subtract(spend.reserved, reservation.amount),
      unpricedInFlight: spend.unpricedInFlight - (reservation.unpriced ? 1 : 0)
    })
  }
}

/** BudgetLedger in memory, with the Postgres adapter's rules; every operation is one atomic update. */
const layer = Layer.effect(
  BudgetLedger,
  Effect.gen(function*() {
    const state = yield* Ref.make<State>({ spend: new Map(), reservations: new Map(), issued: 0 })

    return BudgetLedger.of({
      reserve: ({ amount, expiresAt, limit, tokenId, unpriced, windowStart }) =>
        Ref.modify(state, (s): readonly [Reserved, State] => {
          const spendKey = `${tokenId}@${DateTime.formatIso(windowStart)}`
          const spend = s.spend.get(spendKey) ?? nothingSpent
          const spent = spentOf(spend)
          const fits = BigDecimal.isLessThan(spent, money(limit)) && spend.unpricedInFlight === 0 &&
            (!unpriced || BigDecimal.isZero(spend.reserved))
          if (!fits) {
            return [
              BigDecimal.isGreaterThanOrEqualTo(spent, money(limit))
                ? { _tag: "Exceeded", spent: BigDecimal.toNumberUnsafe(spent) }
                : { _tag: "Busy" },
              s
            ]
          }
          const id = `reservation-${s.issued + 1}`
          return [{ _tag: "Held", reservation: id }, {
            issued: s.issued + 1,
            spend: new Map(s.spend).set(spendKey, {
              settled: spend.settled,
              reserved: BigDecimal.sum(spend.reserved, money(amount)),
              unpricedInFlight: spend.unpricedInFlight + (unpriced ? 1 : 0)
            }),
            reservations: new Map(s.reservations).set(id, { spendKey, amount: money(amount), unpriced, expiresAt })
          }]
        }),
      settle: (id, actual) => Ref.update(state, (s) => release(s, id, money(actual))),
      sweep: (now) =>
        Ref.modify(state, (s) => {
          const expired = [...s.reservations].filter(([, r]) => !DateTime.isGreaterThan(r.expiresAt, now))
          return [expired.length, expired.reduce((next, [id]) => release(next, id, money(0)), s)]
        })
    })
  })
)

export const BudgetLedgerMemory = { layer }
