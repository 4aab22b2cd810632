import { DateTime, Result, Schema } from "effect"
import { InvalidInput } from "../shared/index.ts"

/** How far back a dashboard looks: the last 24 hours, 7 days or 30 days. */
export const StatsWindow = Schema.Literals(["24h", "7d", "30d"])
export type StatsWindow = typeof StatsWindow.Type

/** How a dashboard's window is cut: hours or days (UTC). */
export const StatsBucket = Schema.Literals(["hour", "day"])
export type StatsBucket = typeof StatsBucket.Type

/**
 * The bucket sizes each window may be cut into, the default first: a day is one bar of a 24-hour
 * window and 720 hours are too many to read, so 24h is hourly, 30d daily, and 7d either.
 */
export const statsBuckets: { readonly [W in StatsWindow]: readonly [StatsBucket, ...Array<StatsBucket>] } = {
  "24h": ["hour"],
  "7d": ["day", "hour"],
  "30d": ["day"]
}

const hourMillis = 3_600_000
export const bucketMillis: { readonly [B in StatsBucket]: number } = { hour: hourMillis, day: 24 * hourMillis }
const windowMillis: { readonly [W in StatsWindow]: number } = { "24h": 24 * hourMillis, "7d": 7 * 24 * hourMillis, "30d": 30 * 24 * hourMillis }

/** The buckets a dashboard shows: `count` of `bucket` from `from` (UTC-aligned), the last holding `to`. */
export interface StatsRange {
  readonly window: StatsWindow
  readonly bucket: StatsBucket
  /** The first bucket's start. */
  readonly from: DateTime.Utc
  /** The last bucket's start: the bucket `to` falls in, still filling. */
  readonly last: DateTime.Utc
  /** When the range was asked for. */
  readonly to: DateTime.Utc
  readonly count: number
}

/**
 * The range of `window` cut into `bucket`s (the window's default when undefined), ending with the
 * bucket that holds `now`: 24 hours, 168 hours, 7 days or 30 days, each the window's length in
 * buckets. Buckets start on whole UTC hours and UTC midnights, so every reader sees the same ones.
 * A bucket size the window does not take is invalid input on `query.bucket`.
 */
export const statsRange = (
  window: StatsWindow,
  bucket: StatsBucket | undefined,
  now: DateTime.Utc
): Result.Result<StatsRange, InvalidInput> => {
  const allowed = statsBuckets[window]
  const size = bucket ?? allowed[0]
  if (!allowed.includes(size)) {
    return Result.fail(new InvalidInput({
      message: `bucket ${size} does not fit window ${window}: use ${allowed.join(" or ")}`,
      path: ["query", "bucket"]
    }))
  }
  const step = bucketMillis[size]
  const count = windowMillis[window] / step
  const lastStart = Math.floor(DateTime.toEpochMillis(now) / step) * step
  return Result.succeed({
    window,
    bucket: size,
    from: DateTime.makeUnsafe(lastStart - (count - 1) * step),
    last: DateTime.makeUnsafe(lastStart),
    to: now,
    count
  })
}

/** The bucket starts of `range`, oldest first. */
export const bucketStarts = (range: StatsRange): ReadonlyArray<DateTime.Utc> => {
  const from = DateTime.toEpochMillis(range.from)
  const step = bucketMillis[range.bucket]
  return Array.from({ length: range.count }, (_, i) => DateTime.makeUnsafe(from + i * step))
}

/** One bucket of a dashboard: what the calls that started in it did. */
export interface UsagePoint {
  readonly start: DateTime.Utc
  readonly calls: number
  /** Calls that failed (status `error`; a call its caller left mid-stream is not one). */
  readonly errors: number
  /** What the calls cost, exact decimal USD (calls without a price count as 0). */
  readonly spend_usd: string
  /** The median and 95th percentile of the calls' latency; null without a timed call. */
  readonly latency_p50_ms: number | null
  readonly latency_p95_ms: number | null
}

/** A dashboard's series: one point per bucket of `range`, in order, empty buckets as zeros. */
export interface UsageSeries {
  readonly range: StatsRange
  readonly points: ReadonlyArray<UsagePoint>
}

/** What a dashboard asks: a window and, optionally, its bucket size. */
export interface StatsAsk {
  readonly window?: StatsWindow | undefined
  readonly bucket?: StatsBucket | undefined
}

/** The window asked, or the last 24 hours. */
export const defaultStatsWindow: StatsWindow = "24h"
