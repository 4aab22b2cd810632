import { Context, type DateTime, type Effect, type Option } from "effect"

/**
 * Spend per API token and budget window, with reservations for calls in flight. `reserve` is one
 * atomic conditional write: it succeeds only while settled plus reserved spend is below the limit,
 * so concurrent calls (on any number of instances) cannot all pass a check that only one fits.
 */
export class BudgetLedger extends Context.Service<BudgetLedger, {
  /** A reservation id, or None (with the current spend) when the budget is used up. */
  readonly reserve: (request: {
    readonly tokenId: string
    readonly windowStart: DateTime.Utc
    readonly limit: number
    readonly amount: number
    readonly expiresAt: DateTime.Utc
  }) => Effect.Effect<{ readonly reservation: Option.Option<string>; readonly spent: number }>
  /** Replaces the reservation by the actual cost (0 for a failed call). Settling twice does nothing. */
  readonly settle: (reservationId: string, actualCost: number) => Effect.Effect<void>
  /** Releases reservations whose call never settled (a crash); returns how many. */
  readonly sweep: (now: DateTime.Utc) => Effect.Effect<number>
}>()("@podium/domain/ports/BudgetLedger") {}
