import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { LeaderboardId } from "../leaderboards/index.ts"
import { uuid } from "../testing/index.ts"
import { chatJsonl, demonstrationSets, examplesOf, holdOut, type LearnableRow, selectRows } from "./TrainingData.ts"

const [lb, boardA, boardB] = [1, 2, 3].map((n) => LeaderboardId.make(uuid(n)))

const rowsOf = (n: number, leaderboard = lb!): Array<LearnableRow> =>
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
    const mixed = [...rowsOf(4, boardA), ...rowsOf(2, boardB)]
    expect(selectRows(mixed, { algorithm: "LAST_N", limit: 2, seed: "s" }).map((r) => [r.leaderboard_id, r.input])).toEqual([[boardA, "q3"], [boardB, "q1"]])
  })

  it("LAST_N takes earlier rows first among rows of equal recency", () => {
    const same = rowsOf(6).map((row) => ({ ...row, recency: 0.5 }))
    expect(selectRows(same, { algorithm: "LAST_N", limit: 2, seed: "s" }).map((r) => r.input)).toEqual(["q0", "q1"])
    expect(selectRows(same, { algorithm: "LAST_N", limit: -1, seed: "s" })).toEqual([])
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

describe("holdOut at its bounds", () => {
  it("holds out nothing at share 0, and never every row", () => {
    expect(holdOut(rowsOf(10), 0, "s").held_out).toEqual([])
    expect(holdOut(rowsOf(1), 0.5, "s").held_out).toEqual([])
    const most = holdOut(rowsOf(2), 1, "s")
    expect([most.training.length, most.held_out.length]).toEqual([1, 1])
    expect(holdOut(rowsOf(10), 1, "s").training).toHaveLength(1)
  })
})

describe("examplesOf", () => {
  it("numbers training rows first, then held-out rows, each with its row's fields", () => {
    const [a, b, c] = rowsOf(3)
    expect(examplesOf({ training: [c!, a!], held_out: [b!] })).toEqual([
      { index: 0, split: "training", leaderboard_id: lb, input: "q2", reference: "a2", messages: c!.messages },
      { index: 1, split: "training", leaderboard_id: lb, input: "q0", reference: "a0", messages: a!.messages },
      { index: 2, split: "held_out", leaderboard_id: lb, input: "q1", reference: "a1", messages: b!.messages }
    ])
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

  it("writes a file of several examples as one JSON example a line, in order, a newline in a text included", () => {
    const examples = [
      { messages: [{ role: "user", content: "first\nline" }], reference: "one" },
      { messages: [{ role: "user", content: "second" }], reference: "two\nlines" },
      { messages: [{ role: "user", content: "third" }], reference: "three" }
    ]
    const lines = chatJsonl(examples).split("\n")
    expect(lines.at(-1)).toBe("")
    expect(lines.slice(0, -1).map((line) => JSON.parse(line))).toEqual(
      examples.map((e) => ({ messages: [...e.messages, { role: "assistant", content: e.reference }] }))
    )
    expect(chatJsonl([])).toBe("")
  })
})

describe("the seed", () => {
  const rows = rowsOf(40)
  const inputs = (chosen: ReadonlyArray<LearnableRow>) => chosen.map((r) => r.input)

  it("decides WEIGHTED_SHUFFLE's rows and their order: the same seed the same, another seed others", () => {
    const sample = (seed: string, limit: number | null) => inputs(selectRows(rows, { algorithm: "WEIGHTED_SHUFFLE", limit, seed }))
    expect(sample("a", 10)).toEqual(sample("a", 10))
    expect(sample("a", 10)).not.toEqual(sample("b", 10))
    // every row, ordered by the seed's keys rather than as given
    expect([...sample("a", null)].sort()).toEqual([...inputs(rows)].sort())
    expect(sample("a", null)).not.toEqual(sample("b", null))
    expect(sample("a", null)).not.toEqual(inputs(rows))
  })

  it("decides which rows are held out", () => {
    const held = (seed: string) => inputs(holdOut(rows, 0.25, seed).held_out)
    expect(held("a")).toEqual(held("a"))
    expect(held("a")).not.toEqual(held("b"))
  })

  it("decides each trial's demonstrations: trials of one size and seeds differ", () => {
    const pool = inputs(rows)
    const [, ...sets] = demonstrationSets(pool, [3], 3, "a")
    expect(new Set(sets.map((set) => set.join())).size).toBe(3)
    expect(demonstrationSets(pool, [3], 3, "b")).not.toEqual(demonstrationSets(pool, [3], 3, "a"))
    // a set keeps the pool's order
    for (const set of sets) expect([...set].sort((x, y) => pool.indexOf(x) - pool.indexOf(y))).toEqual(set)
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
