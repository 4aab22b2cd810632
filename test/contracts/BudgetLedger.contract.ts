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
  readonly windowStart?: DateTime.Utc
  readonly expiresAt?: DateTime.Utc
} = {}) =>
  Effect.flatMap(BudgetLedger, (ledger) =>
    ledger.reserve({
      tokenId,
      amount,
      limit: options.limit ?? 1,
      unpriced: options.unpriced ?? false,
      windowStart: options.windowStart ?? window1,
      expiresAt: options.expiresAt ?? later
    }))

const held = (reserved: Reserved): string => {
  assert.strictEqual(reserved._tag, "Held")
  return reserved._tag === "Held" ? reserved.reservation : ""
}

const settle = (reservation: string, actual: number) => Effect.flatMap(BudgetLedger, (l) => l.settle(reservation, actual))

const aToken = Effect.flatMap(ContractTokens, (tokens) => tokens.make)

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
          const token = yield* aToken
          for (let n = 0; n < 4; n++) held(yield* reserve(token, 0.3))
          // 1.2: the last hold went past the limit, by less than its own amount.
          assert.deepStrictEqual(yield* reserve(token, 0.3), { _tag: "Exceeded", spent: 1.2 })
          assert.deepStrictEqual(yield* reserve(token, 0, { unpriced: true }), { _tag: "Exceeded", spent: 1.2 })
        }))

      it.effect("of concurrent calls only those that fit are held: spend passes the limit by at most one call", () =>
        Effect.gen(function*() {
          const token = yield* aToken
          const outcomes = yield* Effect.all(Array.from({ length: 10 }, () => reserve(token, 0.3)), { concurrency: 10 })
          assert.strictEqual(outcomes.filter((o) => o._tag === "Held").length, 4)
          assert.deepStrictEqual(yield* reserve(token, 0.3), { _tag: "Exceeded", spent: 1.2 })
        }))

      it.effect("settling replaces the hold by the actual cost, once, in exact decimals", () =>
        Effect.gen(function*() {
          const token = yield* aToken
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
          const token = yield* aToken
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
    })
  })
