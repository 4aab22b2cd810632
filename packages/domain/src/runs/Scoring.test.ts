import { Option, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { caseFold, exactMatch, type JudgeReply, judgeModelOf, judgeRequest, normaliseAnswer, parseJudgeReply } from "./Scoring.ts"

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

/** Text and its full case folding, as Python 3.11's `str.casefold()` printed them (Unicode 14). */
const pythonFolds: ReadonlyArray<readonly [string, string]> = [
  ["\u00df", "ss"], // ß
  ["\u1e9e", "ss"], // ẞ
  ["STRASSE", "strasse"],
  ["\ufb01", "fi"], // ﬁ
  ["\ufb00", "ff"], // ﬀ
  ["\ufb03", "ffi"], // ﬃ
  ["\u03c2", "\u03c3"], // ς -> σ
  ["\u03c3", "\u03c3"], // σ
  ["\u03a3", "\u03c3"], // Σ -> σ
  ["\u039f\u0394\u039f\u03a3", "\u03bf\u03b4\u03bf\u03c3"], // ΟΔΟΣ -> οδοσ, no final ς
  ["\u0130", "i\u0307"], // İ -> i + combining dot above
  ["\u0131", "\u0131"], // ı stays dotless
  ["I", "i"],
  ["i", "i"],
  ["\u13a0", "\u13a0"], // Cherokee Ꭰ stays
  ["\uab70", "\u13a0"], // ꭰ -> Ꭰ
  ["\u13f0", "\u13f0"], // Ᏸ stays
  ["\u13f8", "\u13f0"], // ᏸ -> Ᏸ
  ["\u017f", "s"], // long s
  ["\u212a", "k"], // Kelvin sign
  ["\u2126", "\u03c9"], // Ohm sign
  ["\u212b", "\u00e5"], // Angstrom sign
  ["\u00c5", "\u00e5"], // Å
  ["\u0390", "\u03b9\u0308\u0301"], // ΐ
  ["\u01f0", "j\u030c"], // ǰ
  ["\u0149", "\u02bcn"], // ŉ
  ["\u03d0", "\u03b2"], // ϐ
  ["\u0345", "\u03b9"], // combining ypogegrammeni
  ["\u1fbc", "\u03b1\u03b9"], // ᾼ
  ["\ufb13", "\u0574\u0576"], // ﬓ
  ["\u00b5", "\u03bc"], // micro sign
  ["\u01c4", "\u01c6"], // Ǆ
  ["\u01c5", "\u01c6"], // ǅ
  ["\u{10400}", "\u{10428}"], // Deseret
  ["\u{1e900}", "\u{1e922}"], // Adlam
  ["\u24b6", "\u24d0"], // Ⓐ
  ["\u24d0", "\u24d0"], // ⓐ
  ["a", "a"],
  [" ", " "]
]

describe("caseFold", () => {
  it("folds as Python's str.casefold on each tricky case", () => {
    for (const [text, folded] of pythonFolds) expect(caseFold(text), text).toBe(folded)
  })

  it("folds any text made of them piece by piece, whatever stands next to what", () => {
    fc.assert(fc.property(fc.array(fc.constantFrom(...pythonFolds), { maxLength: 12 }), (pieces) => {
      expect(caseFold(pieces.map(([text]) => text).join(""))).toBe(pieces.map(([, folded]) => folded).join(""))
    }), { numRuns: 1000 })
  })

  it("is idempotent", () => {
    fc.assert(fc.property(fc.string({ unit: "grapheme", maxLength: 20 }), (text) => {
      expect(caseFold(caseFold(text))).toBe(caseFold(text))
    }), { numRuns: 1000 })
  })
})

describe("normaliseAnswer", () => {
  it("trims, collapses whitespace, lowers case and drops trailing punctuation", () => {
    expect(normaliseAnswer("  Paris.  ")).toBe("paris")
    expect(normaliseAnswer("The\t Eiffel\n\nTower!?")).toBe("the eiffel tower")
    expect(normaliseAnswer("wait… ")).toBe("wait")
    expect(normaliseAnswer("yes . ; :")).toBe("yes")
    expect(normaliseAnswer("ＡＢＣ１２３")).toBe("abc123")
    expect(normaliseAnswer("...")).toBe("")
  })

  it("folds case fully: STRASSE is Straße, İ is i̇, a word-final ς is σ", () => {
    expect(normaliseAnswer("STRASSE")).toBe(normaliseAnswer("Straße"))
    expect(normaliseAnswer("\u1e9e")).toBe("ss")
    expect(normaliseAnswer("\ufb01le")).toBe("file")
    expect(normaliseAnswer("ΟΔΟΣ")).toBe(normaliseAnswer("οδος"))
    expect(normaliseAnswer("\u0130stanbul")).toBe("i\u0307stanbul")
    expect(normaliseAnswer("\u0131")).not.toBe(normaliseAnswer("i"))
  })

  it("trims and collapses Unicode White_Space, exactly", () => {
    const whiteSpace = ["\t", "\n", "\u000b", "\f", "\r", " ", "\u0085", "\u00a0", "\u1680", "\u2000", "\u2005", "\u200a", "\u2028",
      "\u2029", "\u202f", "\u205f", "\u3000"]
    for (const space of whiteSpace) expect(normaliseAnswer(`${space}a${space}${space}b${space}`), `U+${space.codePointAt(0)!.toString(16)}`).toBe("a b")
    for (const other of ["\ufeff", "\u200b", "\u180e", "\u001c", "\u001f"]) {
      expect(normaliseAnswer(`${other}a${other}b`), `U+${other.codePointAt(0)!.toString(16)}`).toBe(`${other}a${other}b`)
    }
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

  it("compares numbers as exact decimals, plain or inside JSON", () => {
    expect(exactMatch("12345678901234567890", "12345678901234567891")).toBe(false)
    expect(exactMatch("12345678901234567890", "1234567890123456789e1")).toBe(true)
    expect(exactMatch("0.1", "0.10000000000000001")).toBe(false)
    expect(exactMatch("1.0", "1")).toBe(true)
    expect(exactMatch("1e2", "100")).toBe(true)
    expect(exactMatch("1E+2", "100.00")).toBe(true)
    expect(exactMatch("-0", "0")).toBe(true)
    expect(exactMatch("-0.0e5", "0")).toBe(true)
    expect(exactMatch("-1", "1")).toBe(false)
    expect(exactMatch("0.050", "5e-2")).toBe(true)
    expect(exactMatch("1e-400", "0")).toBe(false)
    expect(exactMatch("1e400", "1e400")).toBe(true)
    expect(exactMatch("1e400", "10e399")).toBe(true)
    expect(exactMatch("1e99999999999999999999", "1e99999999999999999998")).toBe(false)
    // not JSON, compared as plain decimal text: leading zeros, a plus sign, a bare point
    expect(exactMatch("007", "7")).toBe(true)
    expect(exactMatch("+7", "7.0")).toBe(true)
    expect(exactMatch(".5", "0.5")).toBe(true)
    expect(exactMatch("5.", "5")).toBe(true)
    expect(exactMatch("007", "70")).toBe(false)
    expect(exactMatch("7 apples", "7.0 apples")).toBe(false)
    expect(exactMatch(`"1.50"`, "1.5")).toBe(true)
    // inside JSON
    expect(exactMatch(`{"id": 12345678901234567890}`, `{"id": 12345678901234567891}`)).toBe(false)
    expect(exactMatch(`{"id": 12345678901234567890}`, `{"id": 1.234567890123456789e19}`)).toBe(true)
    expect(exactMatch(`[1.0, -0, 2e1]`, `[1, 0, 20]`)).toBe(true)
    expect(exactMatch(`{"a": [0.30]}`, `{"a": [0.3000000000000000000001]}`)).toBe(false)
    expect(exactMatch(`{"a": 1}`, `{"a": "1"}`)).toBe(false)
  })

  it("compares decimals by their value: any spelling of one number matches, another number does not", () => {
    const digits = fc.stringMatching(/^[0-9]{1,25}$/)
    fc.assert(fc.property(fc.boolean(), digits, fc.integer({ min: -30, max: 30 }), fc.nat(5), fc.nat(5), (negative, mantissa, power, zerosBefore, zerosAfter) => {
      // mantissa·10^power with an exponent, and as digits with a point, padded with zeros either side
      const sign = negative ? "-" : ""
      const scientific = `${sign}${mantissa}e${power}`
      const all = "0".repeat(zerosBefore + Math.max(0, -power)) + mantissa + "0".repeat(Math.max(0, power))
      const whole = all.slice(0, all.length - Math.max(0, -power))
      const fraction = all.slice(all.length - Math.max(0, -power)) + "0".repeat(zerosAfter)
      expect(exactMatch(`${sign}${whole}.${fraction}`, scientific)).toBe(true)
      // JSON allows no leading zeros
      const [jsonWhole, jsonMantissa] = [whole, mantissa].map((d) => d.replace(/^0+(?=.)/, ""))
      expect(exactMatch(`{"n": [${sign}${jsonWhole}.${fraction}0]}`, `{"n": [${sign}${jsonMantissa}e${power}]}`)).toBe(true)
      expect(exactMatch(scientific, `${sign}${mantissa}1e${power - 1}`)).toBe(false)
      expect(exactMatch(`[${sign}${jsonMantissa}e${power}]`, `[${sign}${jsonMantissa}1e${power - 1}]`)).toBe(false)
    }), { numRuns: 500 })
  })

  it("takes linear time over long runs of white space or punctuation inside the text (a trailing [\\s]+$ took seconds)", () => {
    const run = 200_000
    expect(exactMatch(`a${" ".repeat(run)}b`, "a b")).toBe(true)
    expect(exactMatch(`a${"\u0085".repeat(run)}b `, "a\u3000b")).toBe(true)
    expect(exactMatch(`a${".".repeat(run)}b`, "a.b")).toBe(false)
    expect(exactMatch(`${"0".repeat(run)}1.${"0".repeat(run)}`, "1")).toBe(true)
    expect(exactMatch(`1${"0".repeat(run)}1`, `1${"0".repeat(run)}10`)).toBe(false)
    expect(exactMatch(`[1${"0".repeat(run)}1]`, `[1${"0".repeat(run)}1.0]`)).toBe(true)
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

  it("asks at temperature 0", () => {
    expect(asked().temperature).toBe(0)
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

  it("drops a leading think block and takes the JSON from a fence that follows prose (reasoning models)", () => {
    const verdict = `{"verdict": "correct", "reason": "Same city"}`
    const expected = { verdict: "correct", reason: "Same city" }
    expect(replied(`<think>\nThe reference says Paris; the answer says Paris.\n</think>\n\n${verdict}`)).toEqual(expected)
    expect(replied(`<think>a {"verdict": "incorrect"} b</think>${verdict}`)).toEqual(expected)
    expect(replied(`<THINK>x</THINK>\n\`\`\`json\n${verdict}\n\`\`\``)).toEqual(expected)
    expect(replied(`Both name the same city.\n\n\`\`\`json\n${verdict}\n\`\`\`\n`)).toEqual(expected)
    expect(replied(`Step 1: compare.\nStep 2: decide.\n  \`\`\`\n${verdict}\n\`\`\``)).toEqual(expected)
    expect(replied(`<think>\nhm\n</think>\nHere is my verdict:\n\`\`\`json\n${verdict}\n\`\`\``)).toEqual(expected)
  })

  it("takes linear time over long runs of spaces inside a fence (a lazy body before \\s* took minutes)", () => {
    const spaces = " ".repeat(200_000)
    expect(replied("```json\n{" + spaces + `"verdict": "correct"}` + spaces + "```")).toEqual({ verdict: "correct", reason: "" })
    expect(replied("Prose\n```json\n{" + spaces + `"verdict": "correct"}` + spaces + "\n```")).toEqual({ verdict: "correct", reason: "" })
    expect(refused("Prose\n" + spaces + "```\n" + spaces + "x```")).toBe("The judge's reply is not JSON")
  })

  it("refuses other shapes around the verdict as before", () => {
    const verdict = `{"verdict": "correct", "reason": "x"}`
    expect(refused(`<think>never closed ${verdict}`)).toBe("The judge's reply is not JSON")
    expect(refused(`Intro ${verdict}`)).toBe("The judge's reply is not JSON")
    expect(refused(`${verdict}\n<think>late</think>`)).toBe("The judge's reply is not JSON")
    expect(refused(`Prose\n\`\`\`json\n${verdict}\n\`\`\`\nand prose after`)).toBe("The judge's reply is not JSON")
    expect(refused(`Prose \`\`\`json\n${verdict}\n\`\`\``)).toBe("The judge's reply is not JSON")
    expect(refused(`<think>a</think><think>b</think>${verdict}`)).toBe("The judge's reply is not JSON")
    expect(refused(`Prose\n\`\`\`json\n["correct"]\n\`\`\``)).toBe("The judge's reply is not a JSON object")
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

  it("reads back every verdict object after any think block or prose before its fence", () => {
    const reply = fc.record({ verdict: fc.constantFrom("correct" as const, "incorrect" as const), reason: fc.string() })
    const prose = fc.string({ maxLength: 30 }).filter((t) => !t.includes("`") && !/^\s*<think>/i.test(t))
    const thought = fc.string({ maxLength: 30 }).filter((t) => !t.toLowerCase().includes("</think>"))
    fc.assert(fc.property(reply, fc.option(thought, { nil: undefined }), prose, (expected, think, before) => {
      const head = think === undefined ? "" : `<think>${think}</think>\n`
      expect(replied(head + before + "\n```json\n" + JSON.stringify(expected) + "\n```")).toEqual(expected)
    }))
  })
})
