import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { minRun, redactSecret } from "./Redaction.ts"

const KEY = "sk-or-v1-7f3a9c2e5b8d41f6a0c3e9b2d7f1a4c8"

describe("redactSecret", () => {
  it("redacts the key whole, in part and base64-encoded", () => {
    const basic = Buffer.from(`user:${KEY}`).toString("base64")
    const forms = [
      `bad key ${KEY}!`,
      `Incorrect API key provided: ${KEY.slice(0, 10)}***************${KEY.slice(-6)}`,
      `Authorization: Basic ${basic}`,
      `token ${Buffer.from(KEY).toString("base64url")}`,
      `x${Buffer.from(`ab${KEY}`).toString("base64")}`
    ]
    for (const text of forms) {
      const redacted = redactSecret(text, KEY)
      expect(redacted).toContain("[redacted]")
      for (let i = 0; i + minRun <= KEY.length; i++) expect(redacted).not.toContain(KEY.slice(i, i + minRun))
      expect(redacted).not.toContain(Buffer.from(KEY).toString("base64").slice(4, 4 + minRun))
    }
    expect(redactSecret("Incorrect API key provided: sk-or-v1-7f3a****", KEY)).toBe("Incorrect API key provided: [redacted]****")
  })

  it("leaves text without the key alone", () => {
    expect(redactSecret("the model is overloaded", KEY)).toBe("the model is overloaded")
    expect(redactSecret("abc", "abcd")).toBe("abc")
    expect(redactSecret("xabcdx", "abcd")).toBe("x[redacted]x")
  })

  it("never leaves a run of the key behind, wherever it is put", () => {
    fc.assert(fc.property(
      fc.string({ minLength: minRun, maxLength: 40 }),
      fc.string(),
      fc.string(),
      fc.nat(),
      (key, before, after, cut) => {
        const start = cut % (key.length - minRun + 1)
        const text = `${before}${key.slice(start)}${after}`
        expect(redactSecret(text, key)).not.toContain(key.slice(start, start + minRun))
      }
    ))
  })
})
