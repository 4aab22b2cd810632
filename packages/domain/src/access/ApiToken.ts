import { DateTime, Duration, Option, Result, Schema } from "effect"
import { InvalidInput, TokenId, UserId, WorkspaceId } from "../shared/index.ts"
import { Scope, Scopes } from "./Scope.ts"

/** API token secrets start with this; push tokens use `hpd_`, so the two never collide. */
export const ApiTokenPrefix = "pod_"
export const PushTokenPrefix = "hpd_"

export const ExpiresIn = Schema.Literals(["none", "1h", "1d", "7d", "30d", "90d", "180d", "1y"])
export type ExpiresIn = typeof ExpiresIn.Type

export const BudgetResetInterval = Schema.Literals(["daily", "weekly", "monthly"])
export type BudgetResetInterval = typeof BudgetResetInterval.Type

export const TokenStatus = Schema.Literals(["active", "revoked", "expired"])
export type TokenStatus = typeof TokenStatus.Type

export class ApiToken extends Schema.Class<ApiToken>("ApiToken")({
  id: TokenId,
  workspace_id: WorkspaceId,
  name: Schema.String,
  /** The first characters of the secret, enough to recognise it in a list. */
  display_prefix: Schema.String,
  scopes: Schema.Array(Scope),
  expires_at: Schema.NullOr(Schema.DateTimeUtc),
  budget_limit: Schema.NullOr(Schema.Number),
  budget_reset_interval: Schema.NullOr(BudgetResetInterval),
  created_by: Schema.NullOr(UserId),
  created_at: Schema.DateTimeUtc,
  last_used_at: Schema.NullOr(Schema.DateTimeUtc),
  revoked_at: Schema.NullOr(Schema.DateTimeUtc)
}) {}

const lifetimes: Record<Exclude<ExpiresIn, "none">, Duration.Duration> = {
  "1h": Duration.hours(1),
  "1d": Duration.days(1),
  "7d": Duration.days(7),
  "30d": Duration.days(30),
  "90d": Duration.days(90),
  "180d": Duration.days(180),
  "1y": Duration.days(365)
}

export const expiryFor = (expiresIn: ExpiresIn, now: DateTime.Utc): Option.Option<DateTime.Utc> =>
  expiresIn === "none" ? Option.none() : Option.some(DateTime.addDuration(now, lifetimes[expiresIn]))

export const statusAt = (token: Pick<ApiToken, "revoked_at" | "expires_at">, now: DateTime.Utc): TokenStatus =>
  token.revoked_at !== null
    ? "revoked"
    : token.expires_at !== null && !DateTime.isGreaterThan(token.expires_at, now)
    ? "expired"
    : "active"

/** Last use is recorded at most this often, so a busy token costs no write per request. */
export const lastUseResolution = Duration.minutes(1)

export const shouldRecordUse = (lastUsedAt: DateTime.Utc | null, now: DateTime.Utc): boolean =>
  lastUsedAt === null || !DateTime.isGreaterThan(DateTime.addDuration(lastUsedAt, lastUseResolution), now)

/** Scopes a token gets when the request omits them: everything. */
export const defaultScopes: ReadonlyArray<Scope> = Scopes

/**
 * The scopes a request may name: at least one. An empty list is refused rather than read as "all"
 * (a caller who sends `[]` means "none", which would make a useless token); omit the field for all.
 */
export const RequestedScopes = Schema.Array(Scope).check(Schema.isMinLength(1))

export interface TokenRequest {
  readonly name: string
  readonly scopes?: ReadonlyArray<Scope> | undefined
  readonly expires_in?: ExpiresIn | undefined
  readonly budget_limit?: number | null | undefined
  readonly budget_reset_interval?: BudgetResetInterval | null | undefined
}

/** A new, active token as requested: duplicate scopes folded, omitted meaning all, expiry from `now`. */
export const issue = (request: TokenRequest, issued: {
  readonly id: TokenId
  readonly workspaceId: WorkspaceId
  readonly displayPrefix: string
  readonly createdBy: UserId | null
  readonly now: DateTime.Utc
}): ApiToken =>
  new ApiToken({
    id: issued.id,
    workspace_id: issued.workspaceId,
    name: request.name,
    display_prefix: issued.displayPrefix,
    scopes: request.scopes === undefined ? defaultScopes : [...new Set(request.scopes)],
    expires_at: Option.getOrNull(expiryFor(request.expires_in ?? "none", issued.now)),
    budget_limit: request.budget_limit ?? null,
    budget_reset_interval: request.budget_reset_interval ?? null,
    created_by: issued.createdBy,
    created_at: issued.now,
    last_used_at: null,
    revoked_at: null
  })

/** Start of the budget window that contains `now` (UTC days, weeks from Monday, months). */
export const budgetWindowStart = (interval: BudgetResetInterval, now: DateTime.Utc): DateTime.Utc => {
  const day = DateTime.startOf(now, "day")
  switch (interval) {
    case "daily":
      return day
    case "weekly": {
      const sinceMonday = (DateTime.getPartUtc(now, "weekDay") + 6) % 7
      return DateTime.subtract(day, { days: sinceMonday })
    }
    case "monthly":
      return DateTime.startOf(now, "month")
  }
}

/** When the budget window that contains `now` ends. */
export const budgetWindowEnd = (interval: BudgetResetInterval, now: DateTime.Utc): DateTime.Utc => {
  const start = budgetWindowStart(interval, now)
  switch (interval) {
    case "daily":
      return DateTime.add(start, { days: 1 })
    case "weekly":
      return DateTime.add(start, { days: 7 })
    case "monthly":
      return DateTime.add(start, { months: 1 })
  }
}

/**
 * What an owner may change on a token: name, expiry and budget. Not its scopes (a token keeps the
 * scopes it was made with; make a new token for others). An omitted field stays as it is.
 */
export interface TokenChange {
  readonly name?: string | undefined
  /** null: never expires. */
  readonly expires_at?: DateTime.Utc | null | undefined
  /** null: no budget. */
  readonly budget_limit?: number | null | undefined
  /** null: the spend never resets. */
  readonly budget_reset_interval?: BudgetResetInterval | null | undefined
}

/** The current budget window's start for a token (the same as Budget.windowOf, kept here to avoid a cycle). */
const windowStartOf = (interval: BudgetResetInterval | null, now: DateTime.Utc): DateTime.Utc =>
  interval === null ? DateTime.makeUnsafe(0) : budgetWindowStart(interval, now)

/** A changed token, and where the current period's spend moves when the reset interval changed its window. */
export interface AmendedToken {
  readonly token: ApiToken
  readonly spendMove: { readonly from: DateTime.Utc; readonly to: DateTime.Utc } | null
}

/**
 * `token` changed as asked at `now`. A new limit applies at once to what the current period has
 * spent. A new reset interval keeps that spend too: it carries into the new interval's current
 * window (the UTC day, week from Monday or month containing `now`), which ends at the new
 * interval's next reset. Refused: an expiry not after `now`, and a reset interval without a limit.
 */
export const amend = (token: ApiToken, change: TokenChange, now: DateTime.Utc): Result.Result<AmendedToken, InvalidInput> => {
  if (change.expires_at != null && !DateTime.isGreaterThan(change.expires_at, now)) {
    return Result.fail(new InvalidInput({ message: "expires_at must be in the future", path: ["expires_at"] }))
  }
  const next = new ApiToken({
    ...token,
    name: change.name ?? token.name,
    expires_at: change.expires_at === undefined ? token.expires_at : change.expires_at,
    budget_limit: change.budget_limit === undefined ? token.budget_limit : change.budget_limit,
    budget_reset_interval: change.budget_reset_interval === undefined
      ? token.budget_reset_interval
      : change.budget_reset_interval
  })
  if (next.budget_reset_interval !== null && next.budget_limit === null) {
    return Result.fail(new InvalidInput({
      message: "budget_reset_interval needs a budget_limit (set budget_reset_interval to null with it)",
      path: [change.budget_reset_interval === undefined ? "budget_limit" : "budget_reset_interval"]
    }))
  }
  const from = windowStartOf(token.budget_reset_interval, now)
  const to = windowStartOf(next.budget_reset_interval, now)
  return Result.succeed({ token: next, spendMove: DateTime.Equivalence(from, to) ? null : { from, to } })
}
