import { describe, expect, it } from "vitest"
import fc from "fast-check"
import {
  binomialTestTwoSided,
  comparePaired,
  holm,
  mcnemarExact,
  mirror,
  pairedDifference,
  type PairedTable
} from "./PairedStatistics.ts"

const expectRelative = (actual: number, expected: number, tolerance: number) => {
  if (expected === 0) expect(actual).toBe(0)
  else expect(Math.abs(actual - expected) / expected).toBeLessThanOrEqual(tolerance)
}

const table = (both_right: number, wins: number, losses: number, both_wrong: number): PairedTable => ({
  both_right,
  wins,
  losses,
  both_wrong
})

describe("binomialTestTwoSided / mcnemarExact", () => {
  // [wins, losses, p]. p printed by SciPy 1.17.1:
  //   python3 -c "from scipy.stats import binomtest
  //   for w, l in CASES: print(w, l, repr(binomtest(w, w + l, 0.5).pvalue))"
  // (0, 0) is our convention (SciPy refuses n = 0). SciPy's own error at n ≈ 4700 reaches ~5e-13
  // relative (checked against mpmath at 40 digits), hence the 1e-12 tolerance.
  // (300, 2700): the true value is ~1e-430, below the smallest double; both give 0.
  const scipy: ReadonlyArray<readonly [number, number, number]> = [
    [0, 0, 1],
    [1, 1, 1.0],
    [1, 0, 1.0],
    [5, 0, 0.0625],
    [3, 7, 0.34375],
    [9, 10, 1.0],
    [50, 50, 1.0],
    [12, 28, 0.01658900337497471],
    [40, 60, 0.05688793364098089],
    [150, 90, 0.00012987667540779012],
    [0, 20, 1.9073486328125e-06],
    [1200, 1350, 0.003163536948938072],
    [1000, 1400, 3.262202836750829e-16],
    [2100, 2900, 1.0021616163863461e-29],
    [300, 2700, 0.0],
    [0, 1074, 1e-323]
  ]

  it.each(scipy)("mcnemarExact(%i, %i) = %s as SciPy's binomtest", (wins, losses, p) => {
    expectRelative(mcnemarExact(wins, losses), p, 1e-12)
    expectRelative(binomialTestTwoSided(wins, wins + losses), p, 1e-12)
  })

  it("is a probability, symmetric in k and n − k, and grows towards n/2", () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 3000 }), fc.double({ min: 0, max: 1, noNaN: true }), (n, u) => {
      const k = Math.floor(u * n)
      const p = binomialTestTwoSided(k, n)
      expect(p).toBeGreaterThanOrEqual(0)
      expect(p).toBeLessThanOrEqual(1)
      expect(binomialTestTwoSided(n - k, n)).toBe(p)
      if (2 * k < n) expect(binomialTestTwoSided(k + 1, n)).toBeGreaterThanOrEqual(p)
    }))
  })

  it("rejects counts that are not counts", () => {
    expect(() => binomialTestTwoSided(3, 2)).toThrow(RangeError)
    expect(() => binomialTestTwoSided(-1, 2)).toThrow(RangeError)
    expect(() => mcnemarExact(1.5, 2)).toThrow(RangeError)
  })
})

describe("pairedDifference (Newcombe 1998, method 10)", () => {
  // Published 95% limits, rounded as published; table order (both_right, wins, losses, both_wrong)
  // = (a, b, c, d) of the paired 2x2 table, p1 = (a + b)/n, p2 = (a + c)/n.
  const published: ReadonlyArray<{
    readonly source: string
    readonly table: PairedTable
    readonly low: number
    readonly high: number
    readonly digits: number
  }> = [
    {
      // Newcombe's worked example (Stat Med 1998;17:2635–2650), method 10 limits as quoted in the
      // tests of the R package ratesci (petelaud/ratesci, tests/testthat/test3.R: "example from
      // Newcombe ... against Newcombe's method 10 result"); its method 8 (uncorrected φ) limits
      // 0.0618, 0.3242 are what this method must NOT give.
      source: "Newcombe 1998",
      table: table(20, 12, 2, 16),
      low: 0.0562,
      high: 0.3292,
      digits: 4
    },
    {
      // Bentur et al. 2009 as analysed by Fagerland, Lydersen & Laake (2014), quoted in ratesci
      // test3.R ("Fagerland use Newcombe's correlation-corrected 'method 10'").
      source: "Fagerland et al. 2014, Bentur",
      table: table(1, 1, 7, 12),
      low: -0.507,
      high: -0.026,
      digits: 3
    },
    {
      // Cavo et al. 2012 in Fagerland, Lydersen & Laake's R package contingencytables
      // (ocbe-uio/contingencytables, tests/testthat/test-ch8.R: "estimate = -0.0621 (95% CI -0.1186
      // to -0.0046)" for Newcombe_square_and_add_CI_paired_2x2(cavo_2012), cavo_2012 = 59 6 / 16 80).
      source: "Fagerland et al., Cavo",
      table: table(59, 6, 16, 80),
      low: -0.1186,
      high: -0.0046,
      digits: 4
    },
    {
      // The example of M.-L. Tang et al. (2010), quoted in ratesci test3.R ("RD: Tang(ML) 2010
      // example - MOVER-wilson matches", with Newcombe's corrected correlation).
      source: "Tang et al. 2010",
      table: table(8, 3, 1, 2),
      low: -0.1574,
      high: 0.4136,
      digits: 4
    },
    {
      // contingencytables test-ch8.R: matrix(c(1, 0, 0, 1), 2) gives "0.0000 (95% CI -0.5734 to 0.5734)".
      source: "contingencytables, diagonal table",
      table: table(1, 0, 0, 1),
      low: -0.5734,
      high: 0.5734,
      digits: 4
    }
  ]

  it.each(published)("matches $source", ({ table: t, low, high, digits }) => {
    const difference = pairedDifference(t)
    const half = 0.5 * 10 ** -digits + 1e-12
    expect(difference).not.toBeNull()
    expect(difference!.estimate).toBeCloseTo((t.wins - t.losses) / (t.both_right + t.wins + t.losses + t.both_wrong), 15)
    expect(Math.abs(difference!.low - low)).toBeLessThanOrEqual(half)
    expect(Math.abs(difference!.high - high)).toBeLessThanOrEqual(half)
  })

  // Full-precision values for tables without a published example (zero margins, a large
  // difference), from an independent Python implementation (SciPy's norm.ppf(0.975) for z, the
  // same formula written from the paper's description), printed with repr():
  //   (14, 5, 0, 22)  -> 0.011483241383033263, 0.2264926843512112
  //   (0, 3, 0, 0)    -> 0.2059232824597783, 1.0
  //   (0, 0, 0, 7)    -> -0.35433043506668743, 0.35433043506668743
  //   (2, 9, 1, 0)    -> 0.1843134159554558, 0.8719601371827037
  //   (30, 40, 10, 20)-> 0.16757924449928757, 0.417457006443356
  it.each([
    [table(14, 5, 0, 22), 0.011483241383033263, 0.2264926843512112],
    [table(0, 3, 0, 0), 0.2059232824597783, 1.0],
    [table(0, 0, 0, 7), -0.35433043506668743, 0.35433043506668743],
    [table(2, 9, 1, 0), 0.1843134159554558, 0.8719601371827037],
    [table(30, 40, 10, 20), 0.16757924449928757, 0.417457006443356]
  ] as const)("agrees with an independent implementation on %o", (t, low, high) => {
    const difference = pairedDifference(t)!
    expect(difference.low).toBeCloseTo(low, 12)
    expect(difference.high).toBeCloseTo(high, 12)
  })

  it("is null without rows and rejects negative counts", () => {
    expect(pairedDifference(table(0, 0, 0, 0))).toBeNull()
    expect(() => pairedDifference(table(1, -1, 0, 0))).toThrow(RangeError)
  })

  const tables = fc.tuple(fc.nat(60), fc.nat(60), fc.nat(60), fc.nat(60))
    .map(([a, b, c, d]) => table(a, b, c, d))

  it("contains its estimate, stays within [−1, 1], and negates when A and B swap", () => {
    fc.assert(fc.property(tables, (t) => {
      const difference = pairedDifference(t)
      const swapped = pairedDifference({ ...t, wins: t.losses, losses: t.wins })
      if (difference === null) {
        expect(swapped).toBeNull()
        return
      }
      expect(difference.low).toBeLessThanOrEqual(difference.estimate)
      expect(difference.estimate).toBeLessThanOrEqual(difference.high)
      expect(difference.low).toBeGreaterThanOrEqual(-1)
      expect(difference.high).toBeLessThanOrEqual(1)
      expect(swapped).toEqual({ estimate: 0 - difference.estimate, low: 0 - difference.high, high: 0 - difference.low })
    }))
  })
})

describe("holm", () => {
  // Hand-computed (statsmodels is not installed here). Sorted ascending, the i-th (from 0) of m
  // is multiplied by m − i, then a running maximum, capped at 1:
  //   [0.01, 0.04, 0.03, 0.005]: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, max(0.06, 0.04·1) = 0.06
  //   [0.5, 0.2, 0.01]: 0.01·3 = 0.03, 0.2·2 = 0.4, 0.5·1 = 0.5
  //   [0.3, 0.4]: 0.3·2 = 0.6, max(0.6, 0.4) = 0.6
  //   [0.6, 0.7]: min(1, 1.2) = 1, max(1, 0.7) = 1
  //   [0.02, 0.02, 0.5]: 0.06, max(0.06, 0.04) = 0.06, 0.5
  it.each([
    [[0.01, 0.04, 0.03, 0.005], [0.03, 0.06, 0.06, 0.02]],
    [[0.5, 0.2, 0.01], [0.5, 0.4, 0.03]],
    [[0.3, 0.4], [0.6, 0.6]],
    [[0.6, 0.7], [1, 1]],
    [[0.02, 0.02, 0.5], [0.06, 0.06, 0.5]],
    [[0.04], [0.04]],
    [[], []]
  ])("adjusts %o to %o", (p, expected) => {
    const adjusted = holm(p)
    expect(adjusted).toHaveLength(expected.length)
    adjusted.forEach((value, i) => expect(value).toBeCloseTo(expected[i]!, 15))
  })

  it("never lowers a p-value, keeps the order, caps at 1", () => {
    fc.assert(fc.property(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }), (p) => {
      const adjusted = holm(p)
      p.forEach((value, i) => {
        expect(adjusted[i]!).toBeGreaterThanOrEqual(value)
        expect(adjusted[i]!).toBeLessThanOrEqual(1)
        p.forEach((other, j) => {
          if (value < other) expect(adjusted[i]!).toBeLessThanOrEqual(adjusted[j]!)
        })
      })
    }))
  })
})

const verdictRows = (values: ReadonlyArray<boolean | null>) =>
  new Map(values.map((value, row) => [`row-${row}`, value]))

describe("comparePaired", () => {
  // 30 rows. a is right on all; b only on rows 0-9; c right on rows 0-24 and has no verdict on 25-29.
  //   (a, b): 30 shared, 20 wins, 0 losses, 10 ties, p = 2·2^-20 = 1.9073486328125e-6
  //   (a, c): 25 shared, all ties, p = 1
  //   (b, c): 25 shared, 0 wins, 15 losses, 10 ties, p = 2·2^-15 = 6.103515625e-5
  // Holm over 3: 3·1.9073486328125e-6 = 5.7220458984375e-6, 2·6.103515625e-5 = 1.220703125e-4, 1.
  const a = verdictRows(Array.from({ length: 30 }, () => true))
  const b = verdictRows(Array.from({ length: 30 }, (_, row) => row < 10))
  const c = verdictRows(Array.from({ length: 30 }, (_, row) => (row < 25 ? true : null)))
  const result = comparePaired(["a", "b", "c"], new Map([["a", a], ["b", b], ["c", c]]), 0.05)

  it("counts each pair on the rows both have a verdict for", () => {
    expect(result.pairwise.map(({ a, b, shared_rows, wins, losses, ties }) => ({ a, b, shared_rows, wins, losses, ties })))
      .toEqual([
        { a: "a", b: "b", shared_rows: 30, wins: 20, losses: 0, ties: 10 },
        { a: "a", b: "c", shared_rows: 25, wins: 0, losses: 0, ties: 25 },
        { a: "b", b: "c", shared_rows: 25, wins: 0, losses: 15, ties: 10 }
      ])
    expect(result.pairwise.map((pair) => pair.p_value)).toEqual([1.9073486328125e-6, 1, 6.103515625e-5])
    expect(result.pairwise.map((pair) => pair.p_adjusted)).toEqual([5.7220458984375e-6, 1, 1.220703125e-4])
    expect(result.pairwise[0]!.difference).toEqual(pairedDifference(table(10, 20, 0, 0)))
    expect(result.pairwise[2]!.difference).toEqual(pairedDifference(table(10, 0, 15, 0)))
  })

  it("gives each candidate its tied set and rank band", () => {
    expect(result.per_candidate.get("a")).toEqual({
      scored_rows: 30,
      excluded_rows: 0,
      statistically_tied_with: ["c"],
      rank_band: { best: 1, worst: 2 }
    })
    expect(result.per_candidate.get("b")).toEqual({
      scored_rows: 30,
      excluded_rows: 0,
      statistically_tied_with: [],
      rank_band: { best: 3, worst: 3 }
    })
    expect(result.per_candidate.get("c")).toEqual({
      scored_rows: 25,
      excluded_rows: 5,
      statistically_tied_with: ["a"],
      rank_band: { best: 1, worst: 2 }
    })
  })

  it("treats a missing row or candidate as no verdict", () => {
    const sparse = comparePaired(
      ["x", "y", "z"],
      new Map([["x", new Map([["r1", true], ["r2", false]])], ["y", new Map([["r2", true], ["r3", false]])]]),
      0.05
    )
    expect(sparse.pairwise.map(({ shared_rows, wins, losses }) => [shared_rows, wins, losses]))
      .toEqual([[1, 0, 1], [0, 0, 0], [0, 0, 0]])
    expect(sparse.pairwise[1]!.difference).toBeNull()
    expect(sparse.per_candidate.get("z")).toEqual({
      scored_rows: 0,
      excluded_rows: 0,
      statistically_tied_with: ["x", "y"],
      rank_band: { best: 1, worst: 3 }
    })
  })

  it("rejects an alpha outside (0, 1]", () => {
    expect(() => comparePaired([], new Map(), 0)).toThrow(RangeError)
    expect(() => comparePaired([], new Map(), Number.NaN)).toThrow(RangeError)
  })

  const scenario = fc.integer({ min: 1, max: 5 }).chain((candidates) =>
    fc.record({
      ids: fc.constant(Array.from({ length: candidates }, (_, i) => `m${i}`)),
      rows: fc.array(
        fc.array(fc.constantFrom<boolean | null | undefined>(true, false, null, undefined), {
          minLength: candidates,
          maxLength: candidates
        }),
        { maxLength: 40 }
      ),
      alpha: fc.constantFrom(0.01, 0.05, 0.2, 1)
    })
  )
  const verdictsOf = (ids: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<boolean | null | undefined>>) =>
    new Map(ids.map((id, i) => {
      const own = new Map<string, boolean | null>()
      rows.forEach((row, r) => {
        const value = row[i]
        if (value !== undefined) own.set(`r${r}`, value)
      })
      return [id, own]
    }))

  it("keeps its invariants for any verdicts", () => {
    fc.assert(fc.property(scenario, ({ ids, rows, alpha }) => {
      const verdicts = verdictsOf(ids, rows)
      const compared = comparePaired(ids, verdicts, alpha)
      expect(compared.pairwise).toHaveLength((ids.length * (ids.length - 1)) / 2)
      for (const pair of compared.pairwise) {
        expect(pair.a).not.toBe(pair.b)
        expect(pair.shared_rows).toBe(pair.wins + pair.losses + pair.ties)
        expect(pair.p_value).toBeGreaterThanOrEqual(0)
        expect(pair.p_adjusted).toBeGreaterThanOrEqual(pair.p_value)
        expect(pair.p_adjusted).toBeLessThanOrEqual(1)
        expect(pair.difference === null).toBe(pair.shared_rows === 0)
      }
      for (const id of ids) {
        const summary = compared.per_candidate.get(id)!
        expect(summary.statistically_tied_with).not.toContain(id)
        expect(summary.rank_band.best).toBeGreaterThanOrEqual(1)
        expect(summary.rank_band.best).toBeLessThanOrEqual(summary.rank_band.worst)
        expect(summary.rank_band.worst).toBeLessThanOrEqual(ids.length)
        for (const other of summary.statistically_tied_with) {
          expect(compared.per_candidate.get(other)!.statistically_tied_with).toContain(id)
        }
        const own = [...verdicts.get(id)!.values()]
        expect(summary.scored_rows + summary.excluded_rows).toBe(own.length)
      }
    }))
  })

  it("mirrors each pair when the candidate order is reversed", () => {
    fc.assert(fc.property(scenario, ({ ids, rows, alpha }) => {
      const verdicts = verdictsOf(ids, rows)
      const forward = comparePaired(ids, verdicts, alpha)
      const backward = comparePaired([...ids].reverse(), verdicts, alpha)
      for (const pair of forward.pairwise) {
        const reversed = backward.pairwise.find((other) => other.a === pair.b && other.b === pair.a)
        expect(reversed).toEqual(mirror(pair))
      }
      for (const id of ids) {
        const there = backward.per_candidate.get(id)!
        const here = forward.per_candidate.get(id)!
        expect(there.rank_band).toEqual(here.rank_band)
        expect([...there.statistically_tied_with].sort()).toEqual([...here.statistically_tied_with].sort())
      }
    }))
  })

  it("never ties a candidate with itself, even when its id repeats", () => {
    const repeated = comparePaired(["a", "a", "b"], new Map([["a", a], ["b", a]]), 0.05)
    expect(repeated.pairwise).toHaveLength(1)
    expect(repeated.per_candidate.get("a")!.statistically_tied_with).toEqual(["b"])
  })
})
