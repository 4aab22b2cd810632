import { DateTime } from "effect"
import { describe, expect, it } from "vitest"
import { estimateCost, retryAfterSeconds, windowOf } from "./Budget.ts"

const now = DateTime.makeUnsafe("2026-11-18T15:30:00.000Z")

describe("budgets", () => {
  it("windows follow the reset interval; no interval means one window forever", () => {
    const daily = windowOf({ budget_reset_interval: "daily" }, now)
    expect(DateTime.formatIso(daily.start)).toBe("2026-11-18T00:00:00.000Z")
    expect(DateTime.formatIso(daily.end!)).toBe("2026-11-19T00:00:00.000Z")
    expect(windowOf({ budget_reset_interval: null }, now)).toEqual({ start: DateTime.makeUnsafe(0), end: null })
  })

  it("Retry-After counts whole seconds to the reset, at least one", () => {
    expect(retryAfterSeconds(DateTime.makeUnsafe("2026-11-19T00:00:00.000Z"), now)).toBe(8.5 * 3600)
    expect(retryAfterSeconds(DateTime.add(now, { milliseconds: 10 }), now)).toBe(1)
    expect(retryAfterSeconds(null, now)).toBe(86_400)
  })

  it("estimates prompt and output at the candidate's prices, and nothing without prices", () => {
    expect(estimateCost({ input: 0.15, output: 0.6 }, 4000, 500)).toBeCloseTo((1000 * 0.15 + 500 * 0.6) / 1e6, 12)
    expect(estimateCost({ input: 1, output: 1 }, 0, undefined)).toBeCloseTo(1024 / 1e6, 12)
    expect(estimateCost({ input: null, output: 0.6 }, 4000, 500)).toBe(0)
  })
})
