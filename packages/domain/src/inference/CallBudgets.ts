import { Context, DateTime, Duration, Effect, Layer, Option, Schedule } from "effect"
import {
  type Principal,
  BudgetExceeded,
  type CallBound,
  retryAfterSeconds,
  windowOf,
  BudgetLedger,
} from "../access/index.ts"
import { makeCallMetrics } from "./CallMetrics.ts"

/** A reservation left by a call that never settled (a crash) is released after this. */
export const reservationLifetime = Duration.minutes(5)

/**
 * A streamed call's reservation lasts this long, and a budgeted stream no longer (it is then cut
 * off, as if its reader had gone): its settling must find the reservation still held.
 */
export const streamLifetime = Duration.hours(1)

/** How often a call waiting for a call of its token that runs alone asks again: 5 ms, growing to 100 ms. */
const busyRetry = Schedule.exponential("5 millis", 1.5).pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.millis(100))))
)

/** A call without a budget: nothing reserved. */
const unbudgeted = Effect.succeed(Option.none<string>())

/** The ledger's Busy as a failure, so `Effect.retry` asks again. */
class LedgerBusy {}

/**
 * API tokens' budgets around a paid call, for every inference path (leaderboards and models):
 * `reserve` holds the call's bound (None when the token has no budget) and `settle` replaces it
 * with what the call cost (null when unknown: a failed call, no usage reported). A call whose
 * price is unknown, or whose `subject` (`priceSubject`: the candidate or model version at its
 * prices) the token has not seen keep its price, waits while other calls of the token are in
 * flight: it runs alone, so spend can pass the limit by that one call at most (BudgetLedger).
 */
export class CallBudgets extends Context.Service<CallBudgets, {
  readonly reserve: (
    principal: Principal,
    bound: CallBound,
    subject: string,
    /** How long the call may take before its reservation is let go; by default `reservationLifetime`. */
    lifetime?: Duration.Duration
  ) => Effect.Effect<Option.Option<string>, BudgetExceeded>
  readonly settle: (reservation: Option.Option<string>, cost: number | null) => Effect.Effect<void>
}>()(
  // Stryker disable next-line StringLiteral: equivalent, a service's key only has to be unique
  "@podium/domain/inference/CallBudgets"
) {
  static readonly layer = Layer.effect(
    CallBudgets,
    Effect.gen(function*() {
      const ledger = yield* BudgetLedger
      const metrics = yield* makeCallMetrics

      const reserveBudgeted = Effect.fnUntraced(function*(
        principal: Extract<Principal, { readonly _tag: "ApiTokenPrincipal" }>,
        bound: CallBound,
        subject: string,
        lifetime: Duration.Duration
      ) {
        const token = principal.token
        const now = yield* DateTime.now
        const window = windowOf(token, now)
        const held = yield* ledger.reserve({
          tokenId: token.id,
          windowStart: window.start,
          limit: token.budget_limit!,
          amount: bound._tag === "Bounded" ? bound.amount : 0,
          unpriced: bound._tag === "Unbounded",
          subject,
          expiresAt: DateTime.addDuration(now, lifetime)
        }).pipe(
          Effect.flatMap((held) => held._tag === "Busy" ? Effect.fail(new LedgerBusy()) : Effect.succeed(held)),
          Effect.retry({ schedule: busyRetry, while: (e) => e instanceof LedgerBusy }),
          Effect.orDie
        )
        if (held._tag === "Exceeded") {
          metrics.budgetRefused()
          return yield* new BudgetExceeded({
            token_id: token.id,
            budget_limit: token.budget_limit!,
            spent_usd: held.spent,
            retry_after_seconds: retryAfterSeconds(window.end, now)
          })
        }
        return Option.some(held.reservation)
      })

      // most calls are made with a token without a budget (or a session): nothing to reserve, no fiber work
      const reserve = (
        principal: Principal,
        bound: CallBound,
        subject: string,
        lifetime: Duration.Duration = reservationLifetime
      ): Effect.Effect<Option.Option<string>, BudgetExceeded> =>
        principal._tag !== "ApiTokenPrincipal" || principal.token.budget_limit === null
          ? unbudgeted
          : reserveBudgeted(principal, bound, subject, lifetime)

      const settle = (reservation: Option.Option<string>, cost: number | null) =>
        Option.isSome(reservation) ? ledger.settle(reservation.value, cost) : Effect.void

      return CallBudgets.of({ reserve, settle })
    })
  )
}
