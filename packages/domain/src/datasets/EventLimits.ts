import { DateTime } from "effect"
import type { Challenge } from "../leaderboards/index.ts"

/** The UTC day and month a moment falls in, as `YYYY-MM-DD` (the month as its first day). */
export interface Periods {
  readonly day: string
  readonly month: string
}

/** Events counted against a leaderboard's limits in the current periods. */
export interface EventUsage {
  readonly daily: number
  readonly monthly: number
}

export interface EventLimits {
  readonly daily: number | null
  readonly monthly: number | null
}

export const periodsOf = (now: DateTime.Utc): Periods => {
  const iso = DateTime.formatIso(now)
  return { day: iso.slice(0, 10), month: `${iso.slice(0, 7)}-01` }
}

/** When the day's and the month's counts start again from zero (UTC midnight). */
export const resetsAt = (now: DateTime.Utc) => {
  const date = DateTime.toDateUtc(now)
  return {
    day: DateTime.makeUnsafe(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1)),
    month: DateTime.makeUnsafe(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1))
  }
}

export const limitsOf = (challenge: Pick<Challenge, "daily_event_limit" | "monthly_event_limit">): EventLimits => ({
  daily: challenge.daily_event_limit,
  monthly: challenge.monthly_event_limit
})

/** How many more events the limits let in, given what the periods have used. */
export const allowance = (limits: EventLimits, used: EventUsage): number =>
  Math.max(0, Math.min(
    limits.daily === null ? Number.POSITIVE_INFINITY : limits.daily - used.daily,
    limits.monthly === null ? Number.POSITIVE_INFINITY : limits.monthly - used.monthly
  ))

export const isLimited = (limits: EventLimits) => limits.daily !== null || limits.monthly !== null

/**
 * Seconds until the limits let an event in again: the day's reset when only the daily limit is
 * reached, the month's when the monthly one is (whichever is later when both are).
 */
export const retryAfterSeconds = (limits: EventLimits, used: EventUsage, now: DateTime.Utc): number => {
  const resets = resetsAt(now)
  const until = (at: DateTime.Utc) => Math.max(1, Math.ceil((DateTime.toEpochMillis(at) - DateTime.toEpochMillis(now)) / 1000))
  const monthFull = limits.monthly !== null && used.monthly >= limits.monthly
  return until(monthFull ? resets.month : resets.day)
}

/** The `limits` object of push and status answers. */
export const limitsView = (limits: EventLimits, used: EventUsage, now: DateTime.Utc) => {
  const resets = resetsAt(now)
  return {
    daily: { used: used.daily, limit: limits.daily, resets_at: DateTime.formatIso(resets.day) },
    monthly: { used: used.monthly, limit: limits.monthly, resets_at: DateTime.formatIso(resets.month) }
  }
}
