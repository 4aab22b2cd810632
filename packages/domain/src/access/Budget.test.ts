import { DateTime } from "effect"
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { boundCall, messageAllowanceTokens, retryAfterSeconds, utf8Bytes, windowOf } from "./Budget.ts"

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

  it("bounds input by UTF-8 bytes plus a per-message allowance, output by max_tokens or the cap", () => {
    const messages = [{ role: "user", content: "héllo" }] // 6 bytes + 4 for the role
    const input = 6 + 4 + messageAllowanceTokens
    expect(boundCall({ input: 2, output: 3 }, messages, 500, 4096)).toEqual({
      _tag: "Bounded",
      amount: (input * 2 + 500 * 3) / 1e6,
      maxTokens: 500
    })
    expect(boundCall({ input: 2, output: 3 }, messages, undefined, 4096)).toMatchObject({ maxTokens: 4096 })
    expect(boundCall({ input: null, output: 3 }, messages, undefined, 4096)).toEqual({ _tag: "Unbounded", maxTokens: 4096 })
  })

  it("counts UTF-8 bytes as Node encodes them", () => {
    fc.assert(fc.property(fc.string({ unit: "binary" }), (text) => {
      expect(utf8Bytes(text)).toBe(Buffer.byteLength(text, "utf8"))
    }))
  })
})
