import { DateTime } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { allowance, isLimited, limitsOf, limitsView, periodsOf, resetsAt, retryAfterSeconds } from "./EventLimits.ts"

const at = (iso: string) => DateTime.makeUnsafe(iso)
const iso = (t: DateTime.Utc) => DateTime.formatIso(t)

describe("periods", () => {
  it("are the UTC day and month, the month as its first day", () => {
    expect(periodsOf(at("2026-11-22T10:00:00.000Z"))).toEqual({ day: "2026-11-22", month: "2026-11-01" })
    expect(periodsOf(at("2026-11-30T23:59:59.999Z"))).toEqual({ day: "2026-11-30", month: "2026-11-01" })
    expect(periodsOf(at("2026-12-01T00:00:00.000Z"))).toEqual({ day: "2026-12-01", month: "2026-12-01" })
    expect(periodsOf(at("2028-02-29T12:00:00.000Z"))).toEqual({ day: "2028-02-29", month: "2028-02-01" })
    // 23:30 in New York is already the next day in UTC
    expect(periodsOf(at("2026-12-31T23:30:00-05:00"))).toEqual({ day: "2027-01-01", month: "2027-01-01" })
  })

  it("reset at the next UTC midnight and the first of the next month", () => {
    const mid = resetsAt(at("2026-11-22T10:00:00.000Z"))
    expect([iso(mid.day), iso(mid.month)]).toEqual(["2026-11-23T00:00:00.000Z", "2026-12-01T00:00:00.000Z"])
    const lastMoment = resetsAt(at("2026-12-31T23:59:59.999Z"))
    expect([iso(lastMoment.day), iso(lastMoment.month)]).toEqual(["2027-01-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"])
    const midnight = resetsAt(at("2027-01-01T00:00:00.000Z"))
    expect([iso(midnight.day), iso(midnight.month)]).toEqual(["2027-01-02T00:00:00.000Z", "2027-02-01T00:00:00.000Z"])
    const leap = resetsAt(at("2028-02-28T12:00:00.000Z"))
    expect([iso(leap.day), iso(leap.month)]).toEqual(["2028-02-29T00:00:00.000Z", "2028-03-01T00:00:00.000Z"])
  })

  it("a moment is always in the periods that end at its resets", () => {
    const moments = fc.date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2100-01-01T00:00:00Z"), noInvalidDate: true })
    fc.assert(fc.property(moments, (date) => {
      const now = DateTime.makeUnsafe(date)
      const resets = resetsAt(now)
      const periods = periodsOf(now)
      const lastMillisecond = (t: DateTime.Utc) => DateTime.makeUnsafe(DateTime.toEpochMillis(t) - 1)
      expect(periodsOf(lastMillisecond(resets.day)).day).toBe(periods.day)
      expect(periodsOf(resets.day).day).not.toBe(periods.day)
      expect(periodsOf(lastMillisecond(resets.month)).month).toBe(periods.month)
      expect(periodsOf(resets.month).month).not.toBe(periods.month)
    }))
  })
})

describe("allowance", () => {
  const limits = (daily: number | null, monthly: number | null) =>
    limitsOf({ daily_event_limit: daily, monthly_event_limit: monthly })

  it("is what is left of the tighter limit, never below zero, unbounded without limits", () => {
    expect(allowance(limits(null, null), { daily: 10 ** 9, monthly: 10 ** 9 })).toBe(Number.POSITIVE_INFINITY)
    expect(allowance(limits(100, null), { daily: 30, monthly: 5000 })).toBe(70)
    expect(allowance(limits(null, 1000), { daily: 30, monthly: 990 })).toBe(10)
    expect(allowance(limits(100, 1000), { daily: 30, monthly: 990 })).toBe(10)
    expect(allowance(limits(100, 1000), { daily: 95, monthly: 500 })).toBe(5)
    expect(allowance(limits(100, 1000), { daily: 120, monthly: 500 })).toBe(0)
    expect(allowance(limits(0, null), { daily: 0, monthly: 0 })).toBe(0)
  })

  it("limits are set when either is", () => {
    expect(isLimited(limits(null, null))).toBe(false)
    expect(isLimited(limits(1, null))).toBe(true)
    expect(isLimited(limits(null, 1))).toBe(true)
  })

  it("waits for the day's reset when the day is full, for the month's when the month is", () => {
    const late = at("2026-11-22T23:59:30.000Z")
    expect(retryAfterSeconds(limits(10, 1000), { daily: 10, monthly: 10 }, late)).toBe(30)
    expect(retryAfterSeconds(limits(10, null), { daily: 10, monthly: 10 }, late)).toBe(30)
    const monthLeft = 8 * 86_400 + 30
    expect(retryAfterSeconds(limits(null, 10), { daily: 10, monthly: 10 }, late)).toBe(monthLeft)
    expect(retryAfterSeconds(limits(10, 10), { daily: 10, monthly: 10 }, late)).toBe(monthLeft)
    expect(retryAfterSeconds(limits(10, 10), { daily: 3, monthly: 12 }, late)).toBe(monthLeft)
  })

  it("rounds up to whole seconds, at least one", () => {
    const full = { daily: 10, monthly: 10 }
    expect(retryAfterSeconds(limits(10, null), full, at("2026-11-22T23:59:59.999Z"))).toBe(1)
    expect(retryAfterSeconds(limits(10, null), full, at("2026-11-22T23:59:58.500Z"))).toBe(2)
    expect(retryAfterSeconds(limits(10, null), full, at("2026-11-22T00:00:00.000Z"))).toBe(86_400)
  })

  it("limitsView shows what each period used, its limit and when it resets", () => {
    expect(limitsView(limits(100, null), { daily: 7, monthly: 70 }, at("2026-11-30T08:00:00.000Z"))).toEqual({
      daily: { used: 7, limit: 100, resets_at: "2026-12-01T00:00:00.000Z" },
      monthly: { used: 70, limit: null, resets_at: "2026-12-01T00:00:00.000Z" }
    })
  })
})
