import { BigDecimal, DateTime, Effect, Layer, Ref } from "effect"
import { BudgetLedger, type Reserved } from "./BudgetLedger.ts"

/** Money as exact decimals from JavaScript's shortest form of each number, as the Postgres adapter stores it. */
const money = BigDecimal.fromNumberUnsafe

interface Spend {
  readonly settled: BigDecimal.BigDecimal
  readonly reserved: BigDecimal.BigDecimal
  readonly aloneInFlight: number
}

interface Reservation {
  readonly spendKey: string
  readonly amount: BigDecimal.BigDecimal
  readonly alone: boolean
  /** The token's trust this call's settlement informs; null for an unpriced call. */
  readonly trustKey: string | null
  readonly expiresAt: DateTime.Utc
}

interface State {
  /** Per token and window start. */
  readonly spend: ReadonlyMap<string, Spend>
  readonly reservations: ReadonlyMap<string, Reservation>
  /** Per token and subject: true once trusted, false for good once a call settled above its reservation. */
  readonly trust: ReadonlyMap<string, boolean>
  readonly issued: number
}

const nothingSpent: Spend = { settled: money(0), reserved: money(0), aloneInFlight: 0 }

const spentOf = (spend: Spend) => BigDecimal.sum(spend.settled, spend.reserved)

/** Takes a reservation off the books and adds its actual cost (null: unknown), once. */
const release = (state: State, id: string, actual: BigDecimal.BigDecimal | null): State => {
  const reservation = state.reservations.get(id)
  if (reservation === undefined) return state
  const spend = state.spend.get(reservation.spendKey) ?? nothingSpent
  const reservations = new Map(state.reservations)
  reservations.delete(id)
  const { trustKey } = reservation
  const trust = trustKey === null || actual === null
    ? state.trust
    : new Map(state.trust).set(
      trustKey,
      BigDecimal.isLessThanOrEqualTo(actual, reservation.amount) && state.trust.get(trustKey) !== false
    )
  return {
    ...state,
    reservations,
    trust,
    spend: new Map(state.spend).set(reservation.spendKey, {
      settled: BigDecimal.sum(spend.settled, actual ?? money(0)),
      reserved: BigDecimal.subtract(spend.reserved, reservation.amount),
      aloneInFlight: spend.aloneInFlight - (reservation.alone ? 1 : 0)
    })
  }
}

/** BudgetLedger in memory, with the Postgres adapter's rules; every operation is one atomic update. */
const layer = Layer.effect(
  BudgetLedger,
  Effect.gen(function*() {
    const state = yield* Ref.make<State>({ spend: new Map(), reservations: new Map(), trust: new Map(), issued: 0 })

    return BudgetLedger.of({
      reserve: ({ amount, expiresAt, limit, subject, tokenId, unpriced, windowStart }) =>
        Ref.modify(state, (s): readonly [Reserved, State] => {
          const spendKey = `${tokenId}@${DateTime.formatIso(windowStart)}`
          const trustKey = `${tokenId} ${subject}`
          const alone = unpriced || s.trust.get(trustKey) !== true
          const spend = s.spend.get(spendKey) ?? nothingSpent
          const spent = spentOf(spend)
          const fits = BigDecimal.isLessThan(spent, money(limit)) && spend.aloneInFlight === 0 &&
            (!alone || BigDecimal.isZero(spend.reserved))
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
            ...s,
            issued: s.issued + 1,
            spend: new Map(s.spend).set(spendKey, {
              settled: spend.settled,
              reserved: BigDecimal.sum(spend.reserved, money(amount)),
              aloneInFlight: spend.aloneInFlight + (alone ? 1 : 0)
            }),
            reservations: new Map(s.reservations).set(id, {
              spendKey,
              amount: money(amount),
              alone,
              trustKey: unpriced ? null : trustKey,
              expiresAt
            })
          }]
        }),
      settle: (id, actual) => Ref.update(state, (s) => release(s, id, actual === null ? null : money(actual))),
      sweep: (now) =>
        Ref.modify(state, (s) => {
          const expired = [...s.reservations].filter(([, r]) => !DateTime.isGreaterThan(r.expiresAt, now))
          return [expired.length, expired.reduce((next, [id]) => release(next, id, null), s)]
        })
    })
  })
)

export const BudgetLedgerMemory = { layer }
