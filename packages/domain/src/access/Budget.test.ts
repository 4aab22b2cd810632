import { DateTime } from "effect"
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import {
  boundCall,
  chargeOf,
  imageAllowanceTokens,
  messageAllowanceTokens,
  priceSubject,
  retryAfterSeconds,
  utf8Bytes,
  windowOf
} from "./Budget.ts"

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

  describe("OpenAI's message shapes and parameters", () => {
    /** The input tokens a call is bounded by: its amount at $1 a million input tokens and nothing for output. */
    const inputOf = (messages: Parameters<typeof boundCall>[1], parameters?: Readonly<Record<string, unknown>>) => {
      const bound = boundCall({ input: 1, output: 0 }, messages, 10, 4096, parameters)
      return bound._tag === "Bounded" ? Math.round(bound.amount * 1e6) : NaN
    }

    it("counts each text part's bytes and an image part at imageAllowanceTokens, whatever its size", () => {
      expect(imageAllowanceTokens).toBe(2_000)
      const image = (url: string) => ({ type: "image_url", image_url: { url } })
      const small = [{ role: "user", content: [{ type: "text", text: "héllo" }, image("data:,A")] }]
      const large = [{ role: "user", content: [{ type: "text", text: "héllo" }, image(`data:image/png;base64,${"A".repeat(100_000)}`)] }]
      // role 4 + allowance 16 + text 6 + image 2,000
      expect(inputOf(small)).toBe(4 + 16 + 6 + 2_000)
      expect(inputOf(large)).toBe(inputOf(small))
      // a part of another kind counts as its JSON
      const audio = { type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }
      expect(inputOf([{ role: "user", content: [audio] }])).toBe(4 + 16 + utf8Bytes(JSON.stringify(audio)))
    })

    it("counts tool calls' JSON, a tool turn's id and name, and nothing for null content", () => {
      const toolCalls = [{ id: "call_1", type: "function", function: { name: "lookup", arguments: "{\"id\":\"é7\"}" } }]
      const assistant = { role: "assistant", content: null, tool_calls: toolCalls }
      const tool = { role: "tool", tool_call_id: "call_1", content: "42" }
      const named = { role: "user", content: "hi", name: "ann" }
      expect(inputOf([assistant])).toBe(9 + 16 + utf8Bytes(JSON.stringify(toolCalls)))
      expect(inputOf([tool])).toBe(4 + 16 + 6 + 2)
      expect(inputOf([named])).toBe(4 + 16 + 2 + 3)
    })

    it("counts the tool definitions and response format as input, not the other parameters", () => {
      const messages = [{ role: "user", content: "hi" }]
      const tools = [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }]
      const response_format = { type: "json_schema", json_schema: { name: "x", schema: { type: "object" } } }
      const plain = inputOf(messages)
      expect(plain).toBe(4 + 16 + 2)
      expect(inputOf(messages, { temperature: 0.2, seed: 1, user: "someone" })).toBe(plain)
      expect(inputOf(messages, { tools, tool_choice: "auto", response_format }))
        .toBe(plain + utf8Bytes(JSON.stringify(tools)) + 4 + utf8Bytes(JSON.stringify(response_format)))
    })

    it("bounds the output of n choices at n times max_tokens", () => {
      const messages = [{ role: "user", content: "hi" }]
      expect(boundCall({ input: 0, output: 3 }, messages, 100, 4096, { n: 4 })).toEqual({ _tag: "Bounded", amount: (100 * 4 * 3) / 1e6, maxTokens: 100 })
      expect(boundCall({ input: 0, output: 3 }, messages, 100, 4096, { n: 1 })).toEqual({ _tag: "Bounded", amount: (100 * 3) / 1e6, maxTokens: 100 })
      expect(boundCall({ input: 0, output: 3 }, messages, undefined, 4096, { n: 2 })).toEqual({ _tag: "Bounded", amount: (4096 * 2 * 3) / 1e6, maxTokens: 4096 })
    })

    it("string messages are bounded as before whatever parameters do not count", () => {
      const messages = [{ role: "system", content: "Be brief." }, { role: "user", content: "héllo ✓" }]
      expect(boundCall({ input: 2, output: 3 }, messages, 500, 4096, { temperature: 1, max_tokens: 500 }))
        .toEqual({ _tag: "Bounded", amount: (61 * 2 + 500 * 3) / 1e6, maxTokens: 500 })
    })
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
