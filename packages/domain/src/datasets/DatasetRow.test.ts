import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { isStorableText } from "../shared/index.ts"
import { type AcceptedRow, maxClientIdLength, parseRow, parseRows, type Rejection, rowsOf } from "./DatasetRow.ts"

const accepted = (value: unknown): AcceptedRow => {
  const parsed = parseRow(value, 0)
  if (Result.isFailure(parsed)) throw new Error(`rejected: ${parsed.failure.message}`)
  return parsed.success
}

const rejected = (value: unknown, index = 0): Rejection => {
  const parsed = parseRow(value, index)
  if (Result.isSuccess(parsed)) throw new Error(`accepted: ${parsed.success.json}`)
  return parsed.failure
}

/** Every string and key of a JSON value, kept apart so that two halves of a pair never meet. */
const textsOf = (value: unknown): Array<string> =>
  typeof value === "string"
    ? [value]
    : Array.isArray(value)
    ? value.flatMap(textsOf)
    : typeof value === "object" && value !== null
    ? Object.entries(value).flatMap(([key, inner]) => [key, ...textsOf(inner)])
    : []

/** What Postgres can store: no U+0000 and no lone surrogate anywhere in the row. */
const storable = (value: unknown) => textsOf(value).every(isStorableText)

/** JSON values as a request body parser hands them over (`-0` aside: JSON text cannot keep it). */
const jsonValue = (unit: "grapheme" | "binary") =>
  fc.jsonValue({ stringUnit: unit, maxDepth: 3 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown)

describe("parseRow", () => {
  it("a row must be a JSON object", () => {
    for (const value of ["text", 42, null, true, [{ input: "a" }]]) {
      expect(rejected(value, 7)).toEqual({ index: 7, code: "invalid_row", message: "A row must be a JSON object" })
    }
  })

  it("checks the type of every known field, and lets null stand for none", () => {
    const stringFields = [
      "id", "input", "prompt", "question", "query", "output", "expected", "response", "completion", "answer", "rubric",
      "trace_id", "session_id", "user_id"
    ]
    for (const field of stringFields) {
      expect(rejected({ input: "a", [field]: 1 })).toMatchObject({ code: "invalid_row", message: `${field} must be a string` })
      const withNull = { messages: [{ role: "user", content: "hi" }], [field]: null }
      expect(accepted(withNull).json).toBe(JSON.stringify(withNull))
    }
    const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [{ messages: "hi" }, "messages must be an array of objects"],
      [{ messages: [{ role: "user" }, "hi"] }, "messages must be an array of objects"],
      [{ metadata: [] }, "metadata must be an object"],
      [{ metadata: "x" }, "metadata must be an object"],
      [{ tags: "a" }, "tags must be an array of strings"],
      [{ tags: ["a", 1] }, "tags must be an array of strings"],
      [{ latency_ms: "12" }, "latency_ms must be a number"],
      [{ latency_ms: Number.NaN }, "latency_ms must be a number"],
      [{ cost_usd: Number.POSITIVE_INFINITY }, "cost_usd must be a number"],
      [{ id: "x".repeat(maxClientIdLength + 1) }, `id must be at most ${maxClientIdLength} characters`]
    ]
    for (const [fields, message] of cases) {
      expect(rejected({ input: "a", ...fields })).toMatchObject({ code: "invalid_row", message })
    }
    const wellTyped = {
      input: "a",
      messages: null,
      metadata: { any: ["thing"] },
      tags: [],
      latency_ms: 0,
      cost_usd: 0.0012,
      id: "x".repeat(maxClientIdLength)
    }
    expect(accepted(wellTyped).json).toBe(JSON.stringify(wellTyped))
  })

  it("a field of the wrong type is invalid even when there is no input", () => {
    expect(rejected({ tags: "a" })).toMatchObject({ code: "invalid_row" })
  })

  it("needs an input: a non-empty messages or a non-blank input, prompt, question or query", () => {
    for (const value of [{}, { expected: "4" }, { input: "  " }, { messages: [] }, { input: "", prompt: "\n\t", query: " " }]) {
      expect(rejected(value, 3)).toEqual({
        index: 3,
        code: "missing_input",
        message: "A row needs an input: messages, input, prompt, question or query"
      })
    }
  })

  it("takes the input from messages first, then input, prompt, question and query; blank ones do not count", () => {
    expect(accepted({ messages: [{ role: "user", content: "hi" }], input: "ignored" }).input).toBeNull()
    expect(accepted({ messages: [], input: "from input" }).input).toBe("from input")
    expect(accepted({ query: "q", question: "qu", prompt: "p", input: "i" }).input).toBe("i")
    expect(accepted({ query: "q", question: "qu", prompt: "p", input: " " }).input).toBe("p")
    expect(accepted({ query: "q", question: "qu", prompt: "" }).input).toBe("qu")
    expect(accepted({ query: " q " }).input).toBe(" q ")
  })

  it("takes the reference from expected, answer, output, response, completion, in that order", () => {
    const all = { input: "a", completion: "c", response: "r", output: "o", answer: "an", expected: "e" }
    expect(accepted(all).reference).toBe("e")
    expect(accepted({ ...all, expected: " " }).reference).toBe("an")
    expect(accepted({ ...all, expected: null, answer: "" }).reference).toBe("o")
    expect(accepted({ input: "a", completion: "c", response: "r" }).reference).toBe("r")
    expect(accepted({ input: "a", completion: "c" }).reference).toBe("c")
    expect(accepted({ input: "a" }).reference).toBeNull()
  })

  it("keeps every field as pushed, unknown ones included", () => {
    const row = { input: "2+2?", expected: "4", extra: { kept: [1, "two", null] }, "weird key": true }
    const { json } = accepted(row)
    expect(json).toBe(JSON.stringify(row))
    expect(JSON.parse(json)).toEqual(row)
  })

  it("a non-empty id is the client id that makes retries idempotent", () => {
    expect(accepted({ input: "a", id: "evt-1" }).clientId).toBe("evt-1")
    expect(accepted({ input: "a", id: "" }).clientId).toBeNull()
    expect(accepted({ input: "a", id: null }).clientId).toBeNull()
    expect(accepted({ input: "a" }).clientId).toBeNull()
  })

  it("refuses U+0000 and lone surrogates anywhere, keys included, and keeps surrogate pairs", () => {
    const unstorable = [
      { input: "a\u0000b" },
      { input: "a", metadata: { deep: ["x\ud800"] } },
      { input: "a", note: "\udfff" },
      { input: "a", "k\u0000": 1 },
      { input: "a", note: "\\\u0000" }
    ]
    for (const row of unstorable) {
      expect(rejected(row)).toMatchObject({ code: "unstorable_text", message: "A row may not hold U+0000 or lone surrogates" })
    }
    expect(accepted({ input: "😀 \ud83d\ude00" }).input).toBe("😀 😀")
  })

  it("text that only spells an escape (a backslash, then u0000) is storable", () => {
    for (const text of ["\\u0000", "\\\\u0000", "\\ud800", "\\uD83D", "C:\\\\users\\\\u0000.txt"]) {
      expect(accepted({ input: text }).input).toBe(text)
    }
  })

  it("any row with a non-blank storable input is accepted, and its json gives the row back", () => {
    const input = fc.string({ unit: "grapheme", minLength: 1 }).filter((s) => s.trim() !== "")
    const extras = fc.dictionary(fc.string({ unit: "grapheme" }).map((k) => `x_${k}`), jsonValue("grapheme"), { maxKeys: 4 })
    fc.assert(fc.property(input, extras, (text, extra) => {
      const row = { ...extra, input: text }
      const stored = accepted(row)
      expect(stored.input).toBe(text)
      expect(JSON.parse(stored.json)).toEqual(row)
    }))
  })

  it("a row is accepted exactly when Postgres can store every string and key in it", () => {
    fc.assert(fc.property(jsonValue("binary"), fc.string({ unit: "binary" }), (value, key) => {
      const row = { input: "a", [`x_${key}`]: value }
      const parsed = parseRow(row, 0)
      expect(Result.isSuccess(parsed)).toBe(storable(row))
      if (Result.isFailure(parsed)) expect(parsed.failure.code).toBe("unstorable_text")
    }), { numRuns: 300 })
  })
})

describe("rowsOf", () => {
  const rows = (body: unknown) => Result.getOrThrow(rowsOf(body))
  const failure = (body: unknown) => {
    const result = rowsOf(body)
    if (Result.isSuccess(result)) throw new Error("accepted")
    return result.failure
  }

  it("one row, an array of rows, or rows, events and samples in that order", () => {
    expect(rows({ input: "a" })).toEqual([{ input: "a" }])
    expect(rows([{ input: "a" }, "junk"])).toEqual([{ input: "a" }, "junk"])
    expect(rows([])).toEqual([])
    expect(rows({ samples: [3], events: [2], rows: [1] })).toEqual([1, 2, 3])
    expect(rows({ events: [] })).toEqual([])
  })

  it("anything else is invalid input, naming where", () => {
    for (const body of ["text", 1, null]) {
      expect(failure(body)).toMatchObject({ _tag: "InvalidInput", path: ["payload"] })
    }
    expect(failure({ rows: [1], events: { input: "a" } })).toMatchObject({ _tag: "InvalidInput", path: ["payload", "events"] })
    expect(failure({ samples: null })).toMatchObject({ _tag: "InvalidInput", path: ["payload", "samples"] })
  })
})

describe("parseRows", () => {
  it("splits the rows into accepted and rejected, each with its index in the request", () => {
    const { accepted: ok, rejected: refused } = parseRows([
      { input: "a" },
      "junk",
      { expected: "no input" },
      { prompt: "b", id: "c-1" },
      { input: "\u0000" }
    ])
    expect(ok.map((r) => [r.index, r.input, r.clientId])).toEqual([[0, "a", null], [3, "b", "c-1"]])
    expect(refused.map((r) => [r.index, r.code])).toEqual([[1, "invalid_row"], [2, "missing_input"], [4, "unstorable_text"]])
  })
})
