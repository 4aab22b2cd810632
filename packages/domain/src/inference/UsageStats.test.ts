import { DateTime, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { bucketStarts, type StatsBucket, statsBuckets, statsRange, type StatsWindow } from "./UsageStats.ts"

const at = (iso: string) => DateTime.makeUnsafe(iso)
const iso = (dt: DateTime.Utc) => DateTime.formatIso(dt)

describe("statsRange", () => {
  it("cuts 24h into the 24 hours ending with the current one", () => {
    const range = Result.getOrThrow(statsRange("24h", undefined, at("2026-11-28T10:37:12.345Z")))
    expect(range.bucket).toBe("hour")
    expect(range.count).toBe(24)
    expect(iso(range.from)).toBe("2026-11-27T11:00:00.000Z")
    expect(iso(range.last)).toBe("2026-11-28T10:00:00.000Z")
    expect(iso(range.to)).toBe("2026-11-28T10:37:12.345Z")
  })

  it("cuts 7d into 7 UTC days by default, or 168 hours", () => {
    const days = Result.getOrThrow(statsRange("7d", undefined, at("2026-11-28T00:00:00.000Z")))
    expect([days.bucket, days.count, iso(days.from), iso(days.last)])
      .toEqual(["day", 7, "2026-11-22T00:00:00.000Z", "2026-11-28T00:00:00.000Z"])
    const hours = Result.getOrThrow(statsRange("7d", "hour", at("2026-11-28T23:59:59.999Z")))
    expect([hours.bucket, hours.count, iso(hours.from), iso(hours.last)])
      .toEqual(["hour", 168, "2026-11-22T00:00:00.000Z", "2026-11-28T23:00:00.000Z"])
  })

  it("cuts 30d into 30 UTC days", () => {
    const range = Result.getOrThrow(statsRange("30d", "day", at("2026-03-01T05:00:00.000Z")))
    expect([range.count, iso(range.from), iso(range.last)]).toEqual([30, "2026-01-31T00:00:00.000Z", "2026-03-01T00:00:00.000Z"])
  })

  it("refuses a bucket size the window does not take, naming the query's bucket", () => {
    for (const [window, bucket] of [["24h", "day"], ["30d", "hour"]] as const) {
      const refused = statsRange(window, bucket, at("2026-11-28T10:00:00.000Z"))
      expect(Result.isFailure(refused)).toBe(true)
      if (Result.isFailure(refused)) {
        expect(refused.failure.path).toEqual(["query", "bucket"])
        expect(refused.failure.message).toContain(`window ${window}`)
      }
    }
  })

  it("for any time and allowed size: aligned, consecutive buckets spanning the window, the last holding now", () => {
    const pairs = (Object.entries(statsBuckets) as Array<[StatsWindow, ReadonlyArray<StatsBucket>]>)
      .flatMap(([window, buckets]) => buckets.map((bucket) => [window, bucket] as const))
    const windowHours = { "24h": 24, "7d": 168, "30d": 720 }
    fc.assert(fc.property(
      fc.constantFrom(...pairs),
      fc.integer({ min: 0, max: 4_102_444_800_000 }),
      ([window, bucket], millis) => {
        const range = Result.getOrThrow(statsRange(window, bucket, DateTime.makeUnsafe(millis)))
        const step = bucket === "hour" ? 3_600_000 : 86_400_000
        const starts = bucketStarts(range).map(DateTime.toEpochMillis)
        expect(starts).toHaveLength(range.count)
        expect(range.count * step).toBe(windowHours[window] * 3_600_000)
        expect(starts[0]).toBe(DateTime.toEpochMillis(range.from))
        expect(starts.at(-1)).toBe(DateTime.toEpochMillis(range.last))
        for (const [i, start] of starts.entries()) {
          expect(start % step === 0).toBe(true)
          if (i > 0) expect(start - starts[i - 1]!).toBe(step)
        }
        expect(starts.at(-1)! <= millis && millis < starts.at(-1)! + step).toBe(true)
      }
    ))
  })
})
