import { Option, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { exactMatch, type JudgeReply, judgeModelOf, judgeRequest, normaliseAnswer, parseJudgeReply } from "./Scoring.ts"

const replied = (text: string): JudgeReply => {
  const result = parseJudgeReply(text)
  if (Result.isFailure(result)) throw new Error(`failed: ${result.failure}`)
  return result.success
}

const refused = (text: string): string => {
  const result = parseJudgeReply(text)
  if (Result.isSuccess(result)) throw new Error(`parsed as ${JSON.stringify(result.success)}`)
  return result.failure
}

const anyText = fc.string({ unit: "binary", maxLength: 40 })
const noise = fc.array(fc.constantFrom(".", ",", "!", "?", ";", ":", "…", " ", "\t", "\n"), { maxLength: 5 }).map((cs) => cs.join(""))
const space = fc.array(fc.constantFrom(" ", "\t", "\n", "\u00a0", "\u3000"), { minLength: 1, maxLength: 3 }).map((cs) => cs.join(""))
const json = fc.jsonValue({ maxDepth: 3 })

/** The same object with its keys, at every depth, in another order. */
const reordered = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(reordered)
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).reverse().map(([key, item]) => [key, reordered(item)]))
  }
  return value
}

describe("normaliseAnswer", () => {
  it("trims, collapses whitespace, lowers case and drops trailing punctuation", () => {
    expect(normaliseAnswer("  Paris.  ")).toBe("paris")
    expect(normaliseAnswer("The\t Eiffel\n\nTower!?")).toBe("the eiffel tower")
    expect(normaliseAnswer("wait… ")).toBe("wait")
    expect(normaliseAnswer("yes . ; :")).toBe("yes")
    expect(normaliseAnswer("ＡＢＣ１２３")).toBe("abc123")
    expect(normaliseAnswer("...")).toBe("")
  })

  it("keeps punctuation that is not at the end", () => {
    expect(normaliseAnswer("3.14")).toBe("3.14")
    expect(normaliseAnswer("Hello, world.")).toBe("hello, world")
    expect(normaliseAnswer("¿Qué?")).toBe("¿qué")
    expect(normaliseAnswer("C++")).toBe("c++")
  })

  it("is idempotent", () => {
    fc.assert(fc.property(anyText, (text) => {
      const once = normaliseAnswer(text)
      expect(normaliseAnswer(once)).toBe(once)
    }), { numRuns: 1000 })
  })
})

describe("exactMatch", () => {
  it("matches text whatever its whitespace, case and trailing punctuation", () => {
    expect(exactMatch("  paris. ", "Paris")).toBe(true)
    expect(exactMatch("New   York!", "new york")).toBe(true)
    expect(exactMatch("London", "Paris")).toBe(false)
    expect(exactMatch("Paris, France", "Paris France")).toBe(false)
  })

  it("compares JSON as values: key order and number spelling do not matter, array order does", () => {
    expect(exactMatch(`{"a": 1, "b": [1, 2]}`, `{"b":[1,2],"a":1.0}`)).toBe(true)
    expect(exactMatch("4", "4.0")).toBe(true)
    expect(exactMatch("4", " 4e0 ")).toBe(true)
    expect(exactMatch("true", "true")).toBe(true)
    expect(exactMatch("null", "null")).toBe(true)
    expect(exactMatch("[1, 2]", "[2, 1]")).toBe(false)
    expect(exactMatch(`{"a": 1}`, `{"a": 1, "b": 2}`)).toBe(false)
    expect(exactMatch(`{"a": null}`, `{"b": null}`)).toBe(false)
    expect(exactMatch("1", "true")).toBe(false)
    expect(exactMatch("[]", "{}")).toBe(false)
    expect(exactMatch(`{"a": "X"}`, `{"a": "x"}`)).toBe(false)
  })

  it("falls back to text when either side is not JSON, and a JSON string counts as its text", () => {
    expect(exactMatch("4.", "4")).toBe(true)
    expect(exactMatch(" 4e0 ", "4")).toBe(true)
    expect(exactMatch(`"4"`, "4")).toBe(true)
    expect(exactMatch("4", `"4"`)).toBe(true)
    expect(exactMatch("True", "true")).toBe(true)
    expect(exactMatch(`"Paris"`, "paris")).toBe(true)
    expect(exactMatch(`"Paris"`, `"PARIS."`)).toBe(true)
    expect(exactMatch("4", "four")).toBe(false)
  })

  it("is reflexive and symmetric", () => {
    const answer = fc.oneof(anyText, json.map((value) => JSON.stringify(value)))
    fc.assert(fc.property(answer, answer, (a, b) => {
      expect(exactMatch(a, a)).toBe(true)
      expect(exactMatch(a, b)).toBe(exactMatch(b, a))
    }), { numRuns: 500 })
  })

  it("matches whitespace, case and trailing punctuation variants of a text", () => {
    const word = fc.stringMatching(/^[a-z]{1,8}$/)
    fc.assert(fc.property(fc.array(word, { minLength: 1, maxLength: 5 }), space, space, noise, (words, before, between, after) => {
      const reference = words.join(" ")
      const variant = before + words.map((w, i) => (i % 2 === 0 ? w.toUpperCase() : w)).join(between) + after
      expect(exactMatch(variant, reference)).toBe(true)
    }))
  })

  it("ignores the order of JSON object keys", () => {
    fc.assert(fc.property(json, (value) => {
      expect(exactMatch(JSON.stringify(reordered(value)), JSON.stringify(value, null, 2))).toBe(true)
    }))
  })
})

describe("judgeRequest", () => {
  // built inside each test, not once here: mutation testing changes the code only while tests run
  const asked = () => judgeRequest({ question: "Capital of France?", reference: "Paris", answer: "It is Paris." })

  it("asks for a verdict against the reference, question, reference and answer each in its own block", () => {
    const request = asked()
    const [system, user] = request.messages
    expect(request.messages).toHaveLength(2)
    expect(system?.role).toBe("system")
    expect(system?.content).toContain("reference")
    expect(system?.content).not.toContain("own merits")
    expect(system?.content).toContain(`{"verdict": "correct" | "incorrect", "reason": string}`)
    expect(user).toEqual({
      role: "user",
      content: "<question>\nCapital of France?\n</question>\n\n<reference>\nParis\n</reference>\n\n<answer>\nIt is Paris.\n</answer>"
    })
  })

  it("without a reference, asks for a judgement on the answer's own merits", () => {
    const [system, user] = judgeRequest({ question: "Name a prime", reference: null, answer: "7" }).messages
    expect(system?.role).toBe("system")
    expect(system?.content).toContain("own merits")
    expect(system?.content).toContain(`{"verdict": "correct" | "incorrect", "reason": string}`)
    expect(user?.content).toBe("<question>\nName a prime\n</question>\n\n<answer>\n7\n</answer>")
  })

  it("asks for the verdict object through a strict JSON schema", () => {
    expect(asked().response_format).toEqual({
      type: "json_schema",
      json_schema: {
        name: "verdict",
        strict: true,
        schema: {
          type: "object",
          properties: { verdict: { type: "string", enum: ["correct", "incorrect"] }, reason: { type: "string" } },
          required: ["verdict", "reason"],
          additionalProperties: false
        }
      }
    })
  })
})

describe("judgeModelOf", () => {
  it("names a router or hub judge with a model, else none", () => {
    expect(judgeModelOf({ judge_provider: "router", judge_model: "openai/gpt-4o" })).toEqual(Option.some({ provider: "router", model: "openai/gpt-4o" }))
    expect(judgeModelOf({ judge_provider: "hub", judge_model: "m" })).toEqual(Option.some({ provider: "hub", model: "m" }))
    for (const challenge of [
      { judge_provider: "other", judge_model: "m" },
      { judge_provider: null, judge_model: "m" },
      { judge_provider: "hub", judge_model: null },
      { judge_provider: "router", judge_model: "  " }
    ]) expect(Option.isNone(judgeModelOf(challenge))).toBe(true)
  })
})

describe("parseJudgeReply", () => {
  it("reads the bare JSON object, with any surrounding whitespace", () => {
    expect(replied(`{"verdict": "correct", "reason": "Same city"}`)).toEqual({ verdict: "correct", reason: "Same city" })
    expect(replied(`\n  {"verdict":"incorrect","reason":"Wrong year"}  \n`)).toEqual({ verdict: "incorrect", reason: "Wrong year" })
  })

  it("reads the JSON inside a markdown code fence", () => {
    expect(replied("```json\n{\"verdict\": \"correct\", \"reason\": \"ok\"}\n```")).toEqual({ verdict: "correct", reason: "ok" })
    expect(replied("  ```\n{\"verdict\": \"incorrect\", \"reason\": \"no\"}\n```\n")).toEqual({ verdict: "incorrect", reason: "no" })
    expect(replied("```JSON {\"verdict\": \"correct\"} ```")).toEqual({ verdict: "correct", reason: "" })
    expect(replied("```json\n   {\"verdict\": \"correct\", \"reason\": \"indented\"}\n```")).toEqual({ verdict: "correct", reason: "indented" })
  })

  it("accepts the verdict in any case, and a missing reason as empty", () => {
    expect(replied(`{"verdict": "CORRECT", "reason": "x"}`)).toEqual({ verdict: "correct", reason: "x" })
    expect(replied(`{"verdict": "Incorrect"}`)).toEqual({ verdict: "incorrect", reason: "" })
  })

  it("fails on prose, other verdicts, a non-string reason or invalid JSON", () => {
    expect(refused("The answer is correct.")).toBe("The judge's reply is not JSON")
    expect(refused(`{"verdict": "correct", "reason": "x"`)).toBe("The judge's reply is not JSON")
    expect(refused(`Sure! {"verdict": "correct", "reason": "x"}`)).toBe("The judge's reply is not JSON")
    expect(refused("")).toBe("The judge's reply is not JSON")
    expect(refused(`["correct"]`)).toBe("The judge's reply is not a JSON object")
    expect(refused(`"correct"`)).toBe("The judge's reply is not a JSON object")
    expect(refused(`{"verdict": "partially correct", "reason": "x"}`)).toBe(`The judge's verdict is not "correct" or "incorrect"`)
    expect(refused(`{"verdict": " correct", "reason": "x"}`)).toBe(`The judge's verdict is not "correct" or "incorrect"`)
    expect(refused(`{"verdict": true, "reason": "x"}`)).toBe(`The judge's verdict is not "correct" or "incorrect"`)
    expect(refused(`{"reason": "x"}`)).toBe(`The judge's verdict is not "correct" or "incorrect"`)
    expect(refused(`{"verdict": "correct", "reason": 3}`)).toBe("The judge's reason is not a string")
    expect(refused(`{"verdict": "correct", "reason": null}`)).toBe("The judge's reason is not a string")
  })

  it("reads back every verdict object, fenced or not", () => {
    const reply = fc.record({ verdict: fc.constantFrom("correct" as const, "incorrect" as const), reason: fc.string() })
    fc.assert(fc.property(reply, fc.boolean(), (expected, fence) => {
      const body = JSON.stringify(expected)
      expect(replied(fence ? "```json\n" + body + "\n```" : body)).toEqual(expected)
    }))
  })
})
