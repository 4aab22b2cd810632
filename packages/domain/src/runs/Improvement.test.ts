import { describe, expect, it } from "vitest"
import { disagree, improvementTargets, type ImprovementTarget } from "./Improvement.ts"
import { inputKey } from "./Run.ts"

const target = (input: string, reference: string | null, answers: ReadonlyArray<string>): ImprovementTarget => ({
  index: 0,
  prompt: { input },
  input,
  reference,
  answers
})

describe("improvement targets", () => {
  it("candidates disagree when two answers do not match under exact scoring's rule", () => {
    expect(disagree([])).toBe(false)
    expect(disagree(["Paris"])).toBe(false)
    expect(disagree(["Paris", " paris.", "PARIS"])).toBe(false)
    expect(disagree(["Paris", "Lyon"])).toBe(true)
    expect(disagree(['{"a":1,"b":2}', '{"b":2,"a":1}'])).toBe(false)
  })

  it("are the rows without a reference, and with replace the rows candidates disagree on", () => {
    const rows = [
      target("no reference, agreed", null, ["a", "a"]),
      target("reference, disagreed", "x", ["a", "b"]),
      target("reference, agreed", "x", ["a", "A."]),
      target("no reference, never asked", null, [])
    ]
    expect(improvementTargets(rows, false).map((r) => r.input)).toEqual(["no reference, agreed", "no reference, never asked"])
    expect(improvementTargets(rows, true).map((r) => r.input)).toEqual([
      "no reference, agreed",
      "reference, disagreed",
      "no reference, never asked"
    ])
  })

  it("key inputs by their content, whatever the key order they come back in", () => {
    const messages = [{ role: "user", content: "hi" }]
    expect(inputKey({ prompt: { messages } })).toBe(inputKey({ prompt: { messages: [{ content: "hi", role: "user" }] } }))
    expect(inputKey({ prompt: { input: "a" } })).not.toBe(inputKey({ prompt: { prompt: "a" } }))
  })
})
