import { Context, type DateTime, type Effect } from "effect"

/** What a reservation found. */
export type Reserved =
  | { readonly _tag: "Held"; readonly reservation: string }
  /** Spend (settled plus reserved) has reached the limit. */
  | { readonly _tag: "Exceeded"; readonly spent: number }
  /** Below the limit, but an unpriced call must wait for the calls in flight (or they for it). */
  | { readonly _tag: "Busy" }

/**
 * Spend per API token and budget window, with reservations for calls in flight, in exact decimal
 * money. `reserve` is one atomic conditional write, so concurrent calls on any number of instances
 * cannot all pass a check that only one fits:
 * - a priced call (its `amount` an upper bound of its cost) is held while spend is below the
 *   limit and no unpriced call is in flight;
 * - an unpriced call (`amount` 0, cost unknown until it is settled) is held only while spend is
 *   below the limit and nothing else of the token and window is in flight.
 * Spend therefore never exceeds the limit by more than one call's cost.
 */
export class BudgetLedger extends Context.Service<BudgetLedger, {
  readonly reserve: (request: {
    readonly tokenId: string
    readonly windowStart: DateTime.Utc
    readonly limit: number
    readonly amount: number
    readonly unpriced: boolean
    readonly expiresAt: DateTime.Utc
  }) => Effect.Effect<Reserved>
  /** Replaces the reservation by the actual cost (0 for a failed call). Settling twice does nothing. */
  readonly settle: (reservationId: string, actualCost: number) => Effect.Effect<void>
  /** Releases reservations whose call never settled (a crash); returns how many. */
  readonly sweep: (now: DateTime.Utc) => Effect.Effect<number>
}>()("@podium/domain/access/BudgetLedger") {}
