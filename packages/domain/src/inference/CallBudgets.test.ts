import { DateTime, Duration, Effect, Fiber, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import {
  ApiToken,
  type BudgetResetInterval,
  BudgetExceeded,
  BudgetLedger,
  type CallBound,
  Principal
} from "../access/index.ts"
import { BudgetLedgerMemory } from "../access/memory.ts"
import { TokenId } from "../shared/index.ts"
import { WorkspaceId } from "../shared/index.ts"
import { uuid } from "../testing/index.ts"
import { CallBudgets, reservationLifetime } from "./CallBudgets.ts"

const layer = CallBudgets.layer.pipe(Layer.provideMerge(BudgetLedgerMemory.layer), Layer.provideMerge(TestClock.layer()))
const run = <A, E>(effect: Effect.Effect<A, E, CallBudgets | BudgetLedger>) => Effect.runPromise(Effect.provide(effect, layer))

const now = "2026-11-18T15:30:00.000Z"

/** The principal of an API token with this budget. */
const budgeted = (budget_limit: number | null, budget_reset_interval: BudgetResetInterval | null = "daily", n = 1) =>
  Principal.ApiTokenPrincipal({
    token: new ApiToken({
      id: TokenId.make(uuid(n)),
      workspace_id: WorkspaceId.make(uuid(100)),
      name: "budgeted",
      display_prefix: "pod_abcd",
      scopes: ["leaderboards:inference"],
      expires_at: null,
      budget_limit,
      budget_reset_interval,
      created_by: null,
      created_at: DateTime.makeUnsafe(0),
      last_used_at: null,
      revoked_at: null
    })
  })

const priced = (amount: number): CallBound => ({ _tag: "Bounded", amount, maxTokens: 10 })
const unpriced: CallBound = { _tag: "Unbounded", maxTokens: 10 }

const reserve = (principal: Principal, bound: CallBound, subject = "candidate A") =>
  Effect.flatMap(CallBudgets, (budgets) => budgets.reserve(principal, bound, subject))
const settle = (reservation: Option.Option<string>, cost: number | null) => Effect.flatMap(CallBudgets, (b) => b.settle(reservation, cost))
/** A reservation made (Some): the call may go. */
const held = (reservation: Option.Option<string>) => {
  expect(Option.isSome(reservation)).toBe(true)
  return reservation
}

/** `effect` started beside the test; `waiting` says whether it is still waiting. */
const started = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.forkChild(effect)
    yield* Effect.yieldNow
    return { fiber, waiting: () => fiber.pollUnsafe() === undefined }
  })

describe("CallBudgets", () => {
  it("reserves nothing for a caller without a budget, and settling nothing does nothing", () =>
    run(Effect.gen(function*() {
      const push = Principal.PushTokenPrincipal({ pushTokenId: uuid(9), workspaceId: WorkspaceId.make(uuid(100)), leaderboardId: uuid(8) })
      expect(yield* reserve(push, priced(5))).toEqual(Option.none())
      const unlimited = budgeted(null, null)
      expect(yield* reserve(unlimited, priced(5))).toEqual(Option.none())
      expect(yield* reserve(unlimited, unpriced)).toEqual(Option.none())
      yield* settle(Option.none(), 5)
    })))

  it("holds a priced call's bound and settles it at the call's cost; past the limit a call is refused with the spend and the seconds to the reset", () =>
    run(Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse(now))
      const token = budgeted(1)
      const first = held(yield* reserve(token, priced(0.6)))
      yield* settle(first, 0.5)
      const second = held(yield* reserve(token, priced(0.6)))
      // 0.5 settled and 0.6 held
      const exceeded = yield* Effect.flip(reserve(token, priced(0.1)))
      expect(exceeded).toEqual(
        new BudgetExceeded({ token_id: token.token.id, budget_limit: 1, spent_usd: 1.1, retry_after_seconds: 8.5 * 3600 })
      )
      expect(exceeded._tag).toBe("BudgetExceeded") // what the HTTP adapter maps to 429
      expect(yield* Effect.flip(reserve(token, unpriced))).toMatchObject({ spent_usd: 1.1 })
      yield* settle(second, 0.2)
      held(yield* reserve(token, priced(0.1)))
      // without a reset interval the budget never resets: come back in a day
      const forever = budgeted(0, null, 2)
      expect(yield* Effect.flip(reserve(forever, priced(0.1)))).toMatchObject({ spent_usd: 0, retry_after_seconds: 86_400 })
    })))

  it("spend accrues per window: a daily budget starts from nothing at midnight UTC", () =>
    run(Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-11-18T23:59:59.999Z"))
      const token = budgeted(1)
      yield* settle(held(yield* reserve(token, priced(1))), 1)
      expect(yield* Effect.flip(reserve(token, priced(1)))).toMatchObject({ spent_usd: 1, retry_after_seconds: 1 })
      yield* TestClock.adjust("1 millis")
      held(yield* reserve(token, priced(1)))
    })))

  it("a reservation whose call never settles is released by the sweep five minutes after it was made", () =>
    run(Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse(now))
      const ledger = yield* BudgetLedger
      held(yield* reserve(budgeted(1), priced(1)))
      const at = DateTime.addDuration(DateTime.makeUnsafe(now), reservationLifetime)
      expect(yield* ledger.sweep(DateTime.subtract(at, { milliseconds: 1 }))).toBe(0)
      expect(yield* ledger.sweep(at)).toBe(1)
      expect(Duration.toMinutes(reservationLifetime)).toBe(5)
    })))

  it("a call that must run alone waits for the call in flight, asking again after 5 ms, then 7.5 ms, growing to every 100 ms", () =>
    run(Effect.gen(function*() {
      const token = budgeted(100)
      const inFlight = held(yield* reserve(token, unpriced))
      const next = yield* started(reserve(token, unpriced))
      expect(next.waiting()).toBe(true)
      yield* settle(inFlight, 1)
      yield* TestClock.adjust("4 millis")
      expect(next.waiting()).toBe(true)
      yield* TestClock.adjust("1 millis")
      expect(next.waiting()).toBe(false)
      const second = held(yield* Fiber.join(next.fiber))

      const third = yield* started(reserve(token, unpriced))
      yield* TestClock.adjust("5 millis") // asked again: still busy
      yield* settle(second, 1)
      yield* TestClock.adjust("7 millis")
      expect(third.waiting()).toBe(true)
      yield* TestClock.adjust("1 millis")
      const fourth = held(yield* Fiber.join(third.fiber))

      // busy for a minute: it asks every 100 ms by then, so it is held within 100 ms of the settlement
      const fifth = yield* started(reserve(token, unpriced))
      yield* TestClock.adjust("1 minute")
      expect(fifth.waiting()).toBe(true)
      yield* settle(fourth, 1)
      yield* TestClock.adjust("100 millis")
      held(yield* Fiber.join(fifth.fiber))
    })))

  it("a token's calls through a subject run one at a time until one settles within its reservation, side by side after", () =>
    run(Effect.gen(function*() {
      const token = budgeted(100)
      const first = held(yield* reserve(token, priced(1)))
      const second = yield* started(reserve(token, priced(1)))
      yield* TestClock.adjust("1 second")
      expect(second.waiting()).toBe(true)
      yield* settle(first, 1) // exactly its reservation: within
      yield* TestClock.adjust("100 millis")
      const inFlight = held(yield* Fiber.join(second.fiber))
      held(yield* reserve(token, priced(1)))
      held(yield* reserve(token, priced(1)))
      // another subject, and a call without a price through the trusted one, still run alone
      const other = yield* started(reserve(token, priced(1), "candidate B"))
      const unknown = yield* started(reserve(token, unpriced))
      yield* TestClock.adjust("1 second")
      expect([other.waiting(), unknown.waiting()]).toEqual([true, true])
      yield* settle(inFlight, null)
    })))

  it("from the moment a call settles above its reservation, that subject's calls run one at a time again; a cost not known says nothing", () =>
    run(Effect.gen(function*() {
      const token = budgeted(100)
      yield* settle(held(yield* reserve(token, priced(1))), 0.5)
      const over = held(yield* reserve(token, priced(1)))
      const unknown = held(yield* reserve(token, priced(1)))
      yield* settle(unknown, null)
      yield* settle(over, 1.01)
      const alone = held(yield* reserve(token, priced(1)))
      const next = yield* started(reserve(token, priced(1)))
      yield* TestClock.adjust("1 second")
      expect(next.waiting()).toBe(true)
      yield* settle(alone, 0.5) // within again, but the trust is gone for good
      yield* TestClock.adjust("100 millis")
      const after = held(yield* Fiber.join(next.fiber))
      const last = yield* started(reserve(token, priced(1)))
      yield* TestClock.adjust("1 second")
      expect(last.waiting()).toBe(true)
      yield* settle(after, 0.5)

      // a call of unknown cost earns no trust either
      const fresh = budgeted(100, "daily", 3)
      yield* settle(held(yield* reserve(fresh, priced(1))), null)
      const single = held(yield* reserve(fresh, priced(1)))
      const waiting = yield* started(reserve(fresh, priced(1)))
      yield* TestClock.adjust("1 second")
      expect(waiting.waiting()).toBe(true)
      yield* settle(single, null)
    })))
})
