import { describe, expect, it } from "vitest"
import { chooseRows, mapRows } from "./RunRows.ts"

describe("mapRows", () => {
  it("maps by the contract's rule and leaves other fields alone, whatever their types", () => {
    const { rows, skipped } = mapRows([
      { id: 7, question: "2+2?", answer: 4, tags: "math", latency_ms: "12" },
      { input: "Capital of France?", expected: "Paris", output: "ignored: expected comes first" },
      { messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }], completion: { greeting: "hello" } },
      { prompt: "no reference" }
    ])
    expect(skipped).toBe(0)
    expect(rows).toEqual([
      { prompt: { question: "2+2?" }, input: "2+2?", reference: "4" },
      { prompt: { input: "Capital of France?" }, input: "Capital of France?", reference: "Paris" },
      {
        prompt: { messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }] },
        input: "hi",
        reference: '{"greeting":"hello"}'
      },
      { prompt: { prompt: "no reference" }, input: "no reference", reference: null }
    ])
  })

  it("skips rows without an input and rows with text Postgres cannot hold", () => {
    const { rows, skipped } = mapRows([
      "not a row",
      null,
      { expected: "no input" },
      { input: "" },
      { input: "nul \u0000 here" },
      { input: "fine", expected: "lone \ud800 surrogate" },
      { messages: [{ role: "user", content: "nul \u0000" }] },
      { input: "kept" }
    ])
    expect(rows.map((r) => r.input)).toEqual(["kept"])
    expect(skipped).toBe(7)
  })
})

describe("chooseRows", () => {
  const rows = mapRows(Array.from({ length: 10 }, (_, i) => i % 2 === 0 ? { input: `q${i}`, expected: `a${i}` } : { input: `q${i}` })).rows

  it("exact scoring keeps only rows with a reference; indexes follow the chosen rows", () => {
    const chosen = chooseRows(rows, { exact: true, sample: null, seed: "s" })
    expect(chosen.available).toBe(5)
    expect(chosen.rows.map((r) => [r.index, r.input])).toEqual([[0, "q0"], [1, "q2"], [2, "q4"], [3, "q6"], [4, "q8"]])
    expect(chooseRows(rows, { exact: false, sample: null, seed: "s" }).rows).toHaveLength(10)
  })

  it("samples the same rows for the same seed, in their order", () => {
    const a = chooseRows(rows, { exact: false, sample: 4, seed: "seed-1" })
    expect(a).toMatchObject({ available: 10, sampled: true })
    expect(a.rows).toHaveLength(4)
    expect(chooseRows(rows, { exact: false, sample: 4, seed: "seed-1" }).rows).toEqual(a.rows)
    const order = a.rows.map((r) => Number(r.input.slice(1)))
    expect([...order].sort((x, y) => x - y)).toEqual(order)
    expect(chooseRows(rows, { exact: false, sample: 20, seed: "seed-1" })).toMatchObject({ sampled: false })
  })
})
