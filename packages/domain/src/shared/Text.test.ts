import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { isStorableText, storableJson, storableJsonText, storableText, truncateText } from "./Text.ts"

// What Postgres accepts: no NUL, and a string that survives a UTF-8 round trip unchanged.
const postgresAccepts = (text: string) => !text.includes("\u0000") && Buffer.from(text, "utf8").toString("utf8") === text

describe("storableText", () => {
  it("replaces NUL and lone surrogates by U+FFFD and keeps pairs", () => {
    expect(storableText("a\u0000b\ud800c\udc00d😀")).toBe("a\uFFFDb\uFFFDc\uFFFDd😀")
    expect(storableText("\ud83d")).toBe("\uFFFD")
    expect(storableText("plain")).toBe("plain")
  })

  it("always gives text Postgres accepts, and changes only what it must", () => {
    fc.assert(fc.property(fc.string({ unit: "binary" }), (text) => {
      const stored = storableText(text)
      expect(postgresAccepts(stored)).toBe(true)
      expect(isStorableText(text)).toBe(postgresAccepts(text))
      if (postgresAccepts(text)) expect(stored).toBe(text)
      expect(stored.length).toBeLessThanOrEqual(text.length)
    }))
  })

  it("storableJson reaches strings and keys at any depth", () => {
    expect(storableJson({ "k\u0000": ["x\ud800", { y: "\u0000" }], n: 1, b: null }))
      .toEqual({ "k\uFFFD": ["x\uFFFD", { y: "\uFFFD" }], n: 1, b: null })
    // an object without a prototype (as some decoders make) is reached too
    const bare = Object.assign(Object.create(null), { "\u0000": "\ud800" })
    expect(JSON.stringify(storableJson(bare))).toBe('{"\uFFFD":"\uFFFD"}')
    // a "__proto__" key is kept as the key it is
    expect(JSON.stringify(storableJson(JSON.parse('{"__proto__":"\\u0000"}')))).toBe('{"__proto__":"\uFFFD"}')
  })

  it("storableJsonText is the JSON of storableJson, copying nothing when nothing needs it", () => {
    const json = fc.jsonValue()
    const withText = fc.oneof(json, fc.dictionary(fc.string({ unit: "binary" }), fc.oneof(fc.string({ unit: "binary" }), json)))
    fc.assert(fc.property(withText, (value) => {
      const text = storableJsonText(value)
      expect(text).toBe(JSON.stringify(storableJson(value)))
      // what jsonb refuses: \u0000 and a lone surrogate's escape, outside an escaped backslash
      expect(text).not.toMatch(/(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f])/)
    }))
    // a written-out backslash before "u0000" is text, kept as it is
    expect(storableJsonText({ path: "C:\\u0000" })).toBe('{"path":"C:\\\\u0000"}')
    expect(storableJsonText(["\u0000", "\ud800x"])).toBe('["\uFFFD","\uFFFDx"]')
  })
})

describe("truncateText", () => {
  it("cuts to at most max units and never splits a surrogate pair", () => {
    expect(truncateText("ab😀", 3)).toBe("ab")
    expect(truncateText("ab😀", 4)).toBe("ab😀")
    expect(truncateText("abc", 2)).toBe("ab")
    fc.assert(fc.property(fc.string({ unit: "binary" }), fc.nat(40), (text, max) => {
      const cut = truncateText(text, max)
      expect(cut.length).toBeLessThanOrEqual(max)
      expect(text.startsWith(cut)).toBe(true)
      if (isStorableText(text)) expect(isStorableText(cut)).toBe(true)
      expect(cut.length).toBeGreaterThanOrEqual(Math.min(text.length, max) - 1)
    }))
  })
})
