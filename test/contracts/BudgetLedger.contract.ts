import { assert, describe, layer } from "@effect/vitest"
import { BudgetLedger, type Reserved } from "@podium/domain/access"
import { Context, DateTime, Effect, type Layer } from "effect"

/** An API token for spend to accrue to: the one thing the port needs that it does not own. */
export class ContractTokens extends Context.Service<ContractTokens, {
  readonly make: Effect.Effect<string>
}>()("@podium/test/contracts/ContractTokens") {}

const window1 = DateTime.makeUnsafe("2026-11-01T00:00:00.000Z")
const window2 = DateTime.makeUnsafe("2026-12-01T00:00:00.000Z")
/** Far enough that no test's sweep releases these. */
const later = DateTime.makeUnsafe("2030-01-01T00:00:00.000Z")

const reserve = (tokenId: string, amount: number, options: {
  readonly limit?: number
  readonly unpriced?: boolean
  readonly subject?: string
  readonly windowStart?: DateTime.Utc
  readonly expiresAt?: DateTime.Utc
} = {}) =>
  Effect.flatMap(BudgetLedger, (ledger) =>
    ledger.reserve({
      tokenId,
      amount,
      limit: options.limit ?? 1,
      unpriced: options.unpriced ?? false,
      subject: options.subject ?? "candidate A",
      windowStart: options.windowStart ?? window1,
      expiresAt: options.expiresAt ?? later
    }))

const held = (reserved: Reserved): string => {
  assert.strictEqual(reserved._tag, "Held")
  return reserved._tag === "Held" ? reserved.reservation : ""
}

const settle = (reservation: string, actual: number | null) => Effect.flatMap(BudgetLedger, (l) => l.settle(reservation, actual))

const aToken = Effect.flatMap(ContractTokens, (tokens) => tokens.make)

/** A token whose priced calls through `subject` are trusted: one free call settled within its reservation. */
const aTrustingToken = (subject = "candidate A") =>
  Effect.gen(function*() {
    const token = yield* aToken
    yield* settle(held(yield* reserve(token, 0, { subject })), 0)
    return token
  })

/** Whether `token`'s priced calls through `subject` run side by side: a second is held beside a first. */
const sideBySide = (token: string, subject = "candidate A") =>
  Effect.gen(function*() {
    const first = held(yield* reserve(token, 0, { subject }))
    const second = yield* reserve(token, 0, { subject })
    yield* settle(first, null)
    if (second._tag === "Held") yield* settle(second.reservation, null)
    return second._tag === "Held"
  })

/**
 * The behaviour the budget checks rely on, declared once and run against every adapter of
 * `BudgetLedger` (STYLE.md 19): `makeLayer` builds a fresh one.
 */
export const budgetLedgerContract = (
  name: string,
  makeLayer: () => Layer.Layer<BudgetLedger | ContractTokens, unknown>
) =>
  describe(`BudgetLedger contract: ${name}`, () => {
    layer(makeLayer(), { timeout: 60_000 })((it) => {
      it.effect("holds priced calls while spend is below the limit, then reports it exceeded", () =>
        Effect.gen(function*() {
          const token = yield* aTrustingToken()
          for (let n = 0; n < 4; n++) held(yield* reserve(token, 0.3))
          // 1.2: the last hold went past the limit, by less than its own amount.
          assert.deepStrictEqual(yield* reserve(token, 0.3), { _tag: "Exceeded", spent: 1.2 })
          assert.deepStrictEqual(yield* reserve(token, 0, { unpriced: true }), { _tag: "Exceeded", spent: 1.2 })
        }))

      it.effect("of concurrent calls only those that fit are held: spend passes the limit by at most one call", () =>
        Effect.gen(function*() {
          const token = yield* aTrustingToken()
          const outcomes = yield* Effect.all(Array.from({ length: 10 }, () => reserve(token, 0.3)), { concurrency: 10 })
          assert.strictEqual(outcomes.filter((o) => o._tag === "Held").length, 4)
          assert.deepStrictEqual(yield* reserve(token, 0.3), { _tag: "Exceeded", spent: 1.2 })
        }))

      it.effect("settling replaces the hold by the actual cost, once, in exact decimals", () =>
        Effect.gen(function*() {
          const token = yield* aTrustingToken()
          const first = held(yield* reserve(token, 0.25, { limit: 0.3 }))
          const second = held(yield* reserve(token, 0.25, { limit: 0.3 }))
          yield* settle(first, 0.1)
          yield* settle(first, 5)
          yield* settle(second, 0.2)
          // 0.1 + 0.2 in binary floating point is 0.30000000000000004.
          assert.deepStrictEqual(yield* reserve(token, 0.01, { limit: 0.3 }), { _tag: "Exceeded", spent: 0.3 })
          held(yield* reserve(token, 0.01, { limit: 0.31 }))
        }))

      it.effect("each window starts from nothing, and each token has its own", () =>
        Effect.gen(function*() {
          const [token, other] = [yield* aToken, yield* aToken]
          held(yield* reserve(token, 1.5))
          assert.deepStrictEqual(yield* reserve(token, 0.1), { _tag: "Exceeded", spent: 1.5 })
          held(yield* reserve(token, 0.1, { windowStart: window2 }))
          held(yield* reserve(other, 0.1))
        }))

      it.effect("an unpriced call waits for the calls in flight, and they for it", () =>
        Effect.gen(function*() {
          const token = yield* aToken
          const priced = held(yield* reserve(token, 0.2))
          assert.deepStrictEqual(yield* reserve(token, 0, { unpriced: true }), { _tag: "Busy" })
          yield* settle(priced, 0.2)
          const unpriced = held(yield* reserve(token, 0, { unpriced: true }))
          assert.deepStrictEqual(yield* reserve(token, 0.1), { _tag: "Busy" })
          assert.deepStrictEqual(yield* reserve(token, 0, { unpriced: true }), { _tag: "Busy" })
          yield* settle(unpriced, 0.5)
          held(yield* reserve(token, 0.1))
          assert.deepStrictEqual(yield* reserve(token, 0, { unpriced: true }), { _tag: "Busy" })
        }))

      it.effect("sweeping releases the reservations past their expiry, each once, at no cost", () =>
        Effect.gen(function*() {
          const ledger = yield* BudgetLedger
          const token = yield* aTrustingToken()
          const t1 = DateTime.makeUnsafe("2026-11-02T00:00:00.000Z")
          const t2 = DateTime.add(t1, { hours: 1 })
          const lost = held(yield* reserve(token, 0.6, { expiresAt: t1 }))
          held(yield* reserve(token, 0.5, { expiresAt: DateTime.add(t2, { hours: 1 }) }))
          assert.strictEqual(yield* ledger.sweep(t2), 1)
          assert.strictEqual(yield* ledger.sweep(t2), 0)
          yield* settle(lost, 0.6)
          held(yield* reserve(token, 0.6))
          assert.deepStrictEqual(yield* reserve(token, 0.1), { _tag: "Exceeded", spent: 1.1 })
        }))

      it.effect("a priced call through a subject not yet trusted runs alone, as an unpriced call does", () =>
        Effect.gen(function*() {
          const token = yield* aToken
          const first = held(yield* reserve(token, 0.1))
          assert.deepStrictEqual(yield* reserve(token, 0.1), { _tag: "Busy" })
          assert.deepStrictEqual(yield* reserve(token, 0.1, { subject: "candidate B" }), { _tag: "Busy" })
          assert.deepStrictEqual(yield* reserve(token, 0, { unpriced: true }), { _tag: "Busy" })
          yield* settle(first, 0.1) // within its reservation: the price is kept
          held(yield* reserve(token, 0.1))
          held(yield* reserve(token, 0.1))
          assert.deepStrictEqual(yield* reserve(token, 0, { unpriced: true }), { _tag: "Busy" })
        }))

      it.effect("of concurrent calls through an untrusted subject exactly one is held", () =>
        Effect.gen(function*() {
          const token = yield* aToken
          const outcomes = yield* Effect.all(Array.from({ length: 10 }, () => reserve(token, 0.01)), { concurrency: 10 })
          assert.strictEqual(outcomes.filter((o) => o._tag === "Held").length, 1)
          assert.strictEqual(outcomes.filter((o) => o._tag === "Busy").length, 9)
        }))

      it.effect("trust is per token and subject", () =>
        Effect.gen(function*() {
          const token = yield* aTrustingToken("candidate A")
          assert.isTrue(yield* sideBySide(token, "candidate A"))
          assert.isFalse(yield* sideBySide(token, "candidate B"))
          assert.isFalse(yield* sideBySide(yield* aToken, "candidate A"))
          // and it outlasts the window
          const next = held(yield* reserve(token, 0, { windowStart: window2 }))
          held(yield* reserve(token, 0, { windowStart: window2 }))
          yield* settle(next, 0)
        }))

      it.effect("a call settled above its reservation makes its subject run alone for good", () =>
        Effect.gen(function*() {
          const token = yield* aTrustingToken()
          const [over, within] = [held(yield* reserve(token, 0.1)), held(yield* reserve(token, 0.1))]
          yield* settle(over, 0.3)
          yield* settle(within, 0.1) // a call within its reservation afterwards does not restore the trust
          assert.isFalse(yield* sideBySide(token))
          const again = held(yield* reserve(token, 0.1))
          yield* settle(again, 0.05)
          assert.isFalse(yield* sideBySide(token))
        }))

      it.effect("within means at most the reservation, in exact decimals", () =>
        Effect.gen(function*() {
          const exact = yield* aToken
          yield* settle(held(yield* reserve(exact, 0.3)), 0.3)
          assert.isTrue(yield* sideBySide(exact))
          const above = yield* aToken
          // 0.1 + 0.2 in binary floating point: a hair above 0.3
          yield* settle(held(yield* reserve(above, 0.3)), 0.1 + 0.2)
          assert.isFalse(yield* sideBySide(above))
        }))

      it.effect("a call of unknown cost costs nothing and says nothing about the price; unpriced calls earn no trust", () =>
        Effect.gen(function*() {
          const token = yield* aToken
          yield* settle(held(yield* reserve(token, 0.5, { limit: 0.5 })), null)
          assert.isFalse(yield* sideBySide(token))
          yield* settle(held(yield* reserve(token, 0, { unpriced: true })), 0)
          assert.isFalse(yield* sideBySide(token))
          // nothing was spent: a call of the whole limit is still held
          held(yield* reserve(token, 0.5, { limit: 0.5 }))
          const trusting = yield* aTrustingToken()
          yield* settle(held(yield* reserve(trusting, 0.1)), null)
          assert.isTrue(yield* sideBySide(trusting))
        }))

      it.effect("a reservation released by the sweep says nothing about the price", () =>
        Effect.gen(function*() {
          const ledger = yield* BudgetLedger
          const token = yield* aToken
          const t1 = DateTime.makeUnsafe("2026-11-02T00:00:00.000Z")
          held(yield* reserve(token, 0.2, { expiresAt: t1, windowStart: window2 }))
          assert.isAtLeast(yield* ledger.sweep(t1), 1)
          assert.isFalse(yield* sideBySide(token))
        }))
    })
  })
