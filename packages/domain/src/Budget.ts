import { DateTime, Schema } from "effect"
import { type ApiToken, budgetWindowEnd, budgetWindowStart } from "./ApiToken.ts"

/** The window a token's spend accrues in: UTC day, week from Monday, month; without an interval, forever. */
export const windowOf = (token: Pick<ApiToken, "budget_reset_interval">, now: DateTime.Utc) =>
  token.budget_reset_interval === null
    ? { start: DateTime.makeUnsafe(0), end: null }
    : { start: budgetWindowStart(token.budget_reset_interval, now), end: budgetWindowEnd(token.budget_reset_interval, now) }

/** Seconds until the budget resets (Retry-After); without a reset, a day. */
export const retryAfterSeconds = (end: DateTime.Utc | null, now: DateTime.Utc): number =>
  end === null ? 86_400 : Math.max(1, Math.ceil((DateTime.toEpochMillis(end) - DateTime.toEpochMillis(now)) / 1000))

/**
 * What to hold back before a call: the price of the prompt (about 4 characters a token) plus
 * `max_tokens` (1,024 when not given) of output. Unknown prices estimate 0: such a call is never
 * blocked, and its reported cost still counts once it is settled.
 */
export const estimateCost = (
  prices: { readonly input: number | null; readonly output: number | null },
  promptCharacters: number,
  maxTokens: number | undefined
): number =>
  prices.input === null || prices.output === null
    ? 0
    : (Math.ceil(promptCharacters / 4) * prices.input + (maxTokens ?? 1024) * prices.output) / 1_000_000

export class BudgetExceeded extends Schema.TaggedError<BudgetExceeded>()("BudgetExceeded", {
  token_id: Schema.String,
  budget_limit: Schema.Number,
  spent_usd: Schema.Number,
  retry_after_seconds: Schema.Number
}) {}
