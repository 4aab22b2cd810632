import { DateTime } from "effect"
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { boundCall, chargeOf, messageAllowanceTokens, priceSubject, retryAfterSeconds, utf8Bytes, windowOf } from "./Budget.ts"

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
    // a part of a second counts as a whole one
    expect(retryAfterSeconds(DateTime.add(now, { milliseconds: 1500 }), now)).toBe(2)
    expect(retryAfterSeconds(DateTime.add(now, { seconds: 2 }), now)).toBe(2)
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

  it("bounds input exactly: each message's content and role bytes plus 16, at the input price; output at the output price", () => {
    expect(messageAllowanceTokens).toBe(16)
    const messages = [{ role: "system", content: "Be brief." }, { role: "user", content: "héllo ✓" }]
    // system: 9 + 6 + 16 = 31; user: 10 (é two bytes, ✓ three) + 4 + 16 = 30
    expect(boundCall({ input: 2, output: 3 }, messages, 500, 4096)).toEqual({
      _tag: "Bounded",
      amount: (61 * 2 + 500 * 3) / 1e6,
      maxTokens: 500
    })
    // without max_tokens the default caps the output, and is the call's max_tokens
    expect(boundCall({ input: 2, output: 3 }, messages, undefined, 4096)).toEqual({
      _tag: "Bounded",
      amount: (61 * 2 + 4096 * 3) / 1e6,
      maxTokens: 4096
    })
    expect(boundCall({ input: 5, output: 7 }, [], 10, 4096)).toEqual({ _tag: "Bounded", amount: 70 / 1e6, maxTokens: 10 })
    expect(boundCall({ input: 0, output: 0 }, messages, 10, 4096)).toEqual({ _tag: "Bounded", amount: 0, maxTokens: 10 })
  })

  it("a call with either price unknown is unbounded, never free", () => {
    const messages = [{ role: "user", content: "hi" }]
    for (const prices of [{ input: 2, output: null }, { input: null, output: 3 }, { input: null, output: null }]) {
      expect(boundCall(prices, messages, 500, 4096), JSON.stringify(prices)).toEqual({ _tag: "Unbounded", maxTokens: 500 })
      expect(boundCall(prices, messages, undefined, 4096), JSON.stringify(prices)).toEqual({ _tag: "Unbounded", maxTokens: 4096 })
    }
  })

  it("counts UTF-8 bytes exactly at every boundary of the encoding", () => {
    const cases: ReadonlyArray<readonly [string, number]> = [
      ["", 0],
      ["\u0000", 1],
      ["\u007f", 1],
      ["\u0080", 2],
      ["\u07ff", 2],
      ["\u0800", 3],
      ["\ud7ff", 3],
      ["\ue000", 3],
      ["\uffff", 3],
      ["\ud800\udc00", 4], // U+10000, the first pair
      ["\udbff\udfff", 4], // U+10FFFF, the last pair
      ["\ud83d\ude00", 4], // 😀
      ["\ud800", 3], // a lone high surrogate (encoded as U+FFFD)
      ["\udbff", 3],
      ["\udc00", 3], // a lone low surrogate
      ["\udfff", 3],
      ["a\ud800", 4], // a high surrogate at the end
      ["\ud800a", 4], // followed by something other than a low surrogate
      ["\ud800\ud800\udc00", 7], // alone, then a pair
      ["\udc00\ud800", 6], // the wrong order: two alone
      ["\udc00\udc00", 6], // a low surrogate never starts a pair
      ["\uffff\udc00", 6],
      ["\ud800\ue000", 6], // followed by the character just past the low surrogates
      ["\ud800\udbff", 6],
      ["a\u0080\u0800\ud83d\ude00", 10]
    ]
    for (const [text, bytes] of cases) {
      expect(Buffer.byteLength(text, "utf8"), JSON.stringify(text)).toBe(bytes)
      expect(utf8Bytes(text), JSON.stringify(text)).toBe(bytes)
    }
  })

  it("counts UTF-8 bytes as Node encodes them", () => {
    fc.assert(fc.property(fc.string({ unit: "binary" }), (text) => {
      expect(utf8Bytes(text)).toBe(Buffer.byteLength(text, "utf8"))
    }))
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 0xffff })), (units) => {
      const text = String.fromCharCode(...units)
      expect(utf8Bytes(text)).toBe(Buffer.byteLength(text, "utf8"))
    }))
  })

  it("a price subject names what the call goes through and its prices, so a changed price is trusted afresh", () => {
    const subject = priceSubject("candidate 1", { input: 1, output: 2 })
    expect(subject).toBe(priceSubject("candidate 1", { input: 1, output: 2 }))
    const others = [
      priceSubject("candidate 2", { input: 1, output: 2 }),
      priceSubject("candidate 1", { input: 1.5, output: 2 }),
      priceSubject("candidate 1", { input: 1, output: 3 }),
      priceSubject("candidate 1", { input: 2, output: 1 }),
      priceSubject("candidate 1", { input: null, output: 2 })
    ]
    expect(new Set([subject, ...others]).size).toBe(6)
  })

  it("a completed call is charged what it reported; a priced one that reported nothing, its bound; an unpriced one, nothing known", () => {
    const bounded = { _tag: "Bounded", amount: 0.25, maxTokens: 10 } as const
    const unbounded = { _tag: "Unbounded", maxTokens: 10 } as const
    expect(chargeOf(bounded, 9)).toBe(9)
    expect(chargeOf(bounded, 0)).toBe(0)
    expect(chargeOf(bounded, null)).toBe(0.25)
    expect(chargeOf(unbounded, 0.5)).toBe(0.5)
    expect(chargeOf(unbounded, null)).toBe(null)
  })
})
