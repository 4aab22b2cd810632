import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { chatJsonl, demonstrationSets, holdOut, type LearnableRow, selectRows } from "./TrainingData.ts"

const rowsOf = (n: number, leaderboard = "lb"): Array<LearnableRow> =>
  Array.from({ length: n }, (_, i) => ({
    leaderboard_id: leaderboard,
    input: `q${i}`,
    reference: `a${i}`,
    messages: [{ role: "user", content: `q${i}` }],
    recency: n === 1 ? 1 : i / (n - 1)
  }))

const counts = fc.integer({ min: 0, max: 300 })
const limits = fc.option(fc.integer({ min: 0, max: 400 }), { nil: null })
const seeds = fc.string({ maxLength: 12 })
const algorithms = fc.constantFrom("LAST_N" as const, "WEIGHTED_SHUFFLE" as const)

describe("selectRows", () => {
  it("LAST_N takes the newest rows, in their order", () => {
    expect(selectRows(rowsOf(10), { algorithm: "LAST_N", limit: 3, seed: "s" }).map((r) => r.input)).toEqual(["q7", "q8", "q9"])
    // two leaderboards compare by recency, not by position
    const mixed = [...rowsOf(4, "a"), ...rowsOf(2, "b")]
    expect(selectRows(mixed, { algorithm: "LAST_N", limit: 2, seed: "s" }).map((r) => `${r.leaderboard_id}${r.input}`)).toEqual(["aq3", "bq1"])
  })

  it("takes min(limit, rows) distinct rows of the input, the same for the same seed", () => {
    fc.assert(fc.property(counts, limits, seeds, algorithms, (n, limit, seed, algorithm) => {
      const rows = rowsOf(n)
      const chosen = selectRows(rows, { algorithm, limit, seed })
      expect(chosen).toHaveLength(limit === null ? n : Math.min(n, limit))
      expect(new Set(chosen).size).toBe(chosen.length)
      for (const row of chosen) expect(rows).toContain(row)
      expect(selectRows(rows, { algorithm, limit, seed })).toEqual(chosen)
    }))
  })

  it("WEIGHTED_SHUFFLE favours newer rows without leaving the old ones out", () => {
    const rows = rowsOf(1000)
    let newer = 0
    let older = 0
    for (let trial = 0; trial < 20; trial++) {
      for (const row of selectRows(rows, { algorithm: "WEIGHTED_SHUFFLE", limit: 100, seed: `t${trial}` })) {
        if (row.recency >= 0.5) newer++
        else older++
      }
    }
    expect(newer).toBeGreaterThan(older * 1.5)
    expect(older).toBeGreaterThan(0)
  })
})

describe("holdOut", () => {
  it("holds out the share asked (at least one row of two or more), never a row in both", () => {
    fc.assert(fc.property(counts, fc.double({ min: 0, max: 0.5, noNaN: true }), seeds, (n, share, seed) => {
      const rows = rowsOf(n)
      const { held_out, training } = holdOut(rows, share, seed)
      expect(training.length + held_out.length).toBe(n)
      expect(held_out.filter((r) => training.includes(r))).toEqual([])
      if (share === 0 || n < 2) expect(held_out).toEqual([])
      else {
        expect(held_out.length).toBeGreaterThanOrEqual(1)
        expect(training.length).toBeGreaterThanOrEqual(1)
        expect(Math.abs(held_out.length - Math.max(1, Math.round(n * share)))).toBeLessThanOrEqual(1)
      }
      expect(holdOut(rows, share, seed)).toEqual({ held_out, training })
    }))
  })
})

describe("chatJsonl", () => {
  it("writes one chat example per line, the reference as the assistant's turn", () => {
    const text = chatJsonl([{ messages: [{ role: "system", content: "Be brief" }, { role: "user", content: "2+2?" }], reference: "4" }])
    expect(text.endsWith("\n")).toBe(true)
    expect(JSON.parse(text.trim())).toEqual({
      messages: [{ role: "system", content: "Be brief" }, { role: "user", content: "2+2?" }, { role: "assistant", content: "4" }]
    })
  })
})

describe("demonstrationSets", () => {
  it("tries the empty set first, then seeded sets of each size the pool can fill", () => {
    const sets = demonstrationSets(["a", "b", "c", "d", "e"], [2, 4, 8], 3, "s")
    expect(sets[0]).toEqual([])
    expect(sets.slice(1).map((s) => s.length)).toEqual([2, 2, 2, 4, 4, 4])
    for (const set of sets) expect(new Set(set).size).toBe(set.length)
    expect(demonstrationSets(["a", "b"], [2], 3, "s")).toEqual([[], ["a", "b"]])
  })
})
