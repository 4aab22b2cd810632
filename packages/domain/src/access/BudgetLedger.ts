import { Context, type DateTime, type Effect } from "effect"

/** What a reservation found. */
export type Reserved =
  | { readonly _tag: "Held"; readonly reservation: string }
  /** Spend (settled plus reserved) has reached the limit. */
  | { readonly _tag: "Exceeded"; readonly spent: number }
  /** Below the limit, but a call that runs alone must wait for the calls in flight (or they for it). */
  | { readonly _tag: "Busy" }

/**
 * Spend per API token and budget window, with reservations for calls in flight, in exact decimal
 * money. `reserve` is one atomic conditional write, so concurrent calls on any number of instances
 * cannot all pass a check that only one fits:
 * - a call runs alone (held only while spend is below the limit and nothing else of the token and
 *   window is in flight, and nothing else is held while it is) when its cost is unknown in advance
 *   (`unpriced`, `amount` 0) or when its `subject`'s price is not trusted for the token;
 * - a priced call through a trusted subject (its `amount` an upper bound of its cost) is held while
 *   spend is below the limit and no call runs alone.
 * A subject (what the call goes through at its prices) becomes trusted for a token when one of its
 * priced calls settles within its reservation, and is never trusted again once one settles above.
 * Spend therefore never exceeds the limit by more than one call's cost, unless a trusted subject
 * starts billing above its price: then by what its calls already in flight were billed above.
 */
export class BudgetLedger extends Context.Service<BudgetLedger, {
  readonly reserve: (request: {
    readonly tokenId: string
    readonly windowStart: DateTime.Utc
    readonly limit: number
    readonly amount: number
    readonly unpriced: boolean
    /** What the call goes through at its prices, e.g. a candidate: the key of the token's trust. */
    readonly subject: string
    readonly expiresAt: DateTime.Utc
  }) => Effect.Effect<Reserved>
  /**
   * Replaces the reservation by the actual cost, and tells the trust of its subject whether a priced
   * call kept its bound. `null` is a cost not known (a failed call, an upstream that reports no
   * usage): nothing is added and the call says nothing about the price. Settling twice does nothing.
   */
  readonly settle: (reservationId: string, actualCost: number | null) => Effect.Effect<void>
  /** Releases reservations whose call never settled (a crash), at no cost and saying nothing of the price; returns how many. */
  readonly sweep: (now: DateTime.Utc) => Effect.Effect<number>
}>()("@podium/domain/access/BudgetLedger") {}
