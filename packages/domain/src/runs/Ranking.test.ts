import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { percentile, rank, type Tally, wilson, winnerOf } from "./Ranking.ts"

const tally = (id: string, correct: number, total: number, cost: number | null = null, p50: number | null = null): Tally => ({
  leaderboard_model_id: id,
  correct,
  total,
  total_cost_usd: cost,
  latency_ms_p50: p50
})

/** Tallies with unique ids, some without answers, few distinct scores so that ties are common. */
const tallies = fc.array(
  fc.record({
    total: fc.integer({ min: 0, max: 6 }),
    share: fc.double({ min: 0, max: 1, noNaN: true }),
    cost: fc.option(fc.constantFrom(0, 0.5, 1, 2.25), { nil: null }),
    p50: fc.option(fc.constantFrom(100, 250, 900), { nil: null })
  }),
  { maxLength: 12 }
).map((drafts) => drafts.map((d, i) => tally(`m${i}`, Math.round(d.share * d.total), d.total, d.cost, d.p50)))

const byId = <A extends { readonly leaderboard_model_id: string }>(items: ReadonlyArray<A>) =>
  new Map(items.map((item) => [item.leaderboard_model_id, item]))

describe("wilson", () => {
  it("is the Wilson score 95% interval", () => {
    const eight = wilson(8, 10)!
    expect(eight.low).toBeCloseTo(0.4902, 4)
    expect(eight.high).toBeCloseTo(0.9433, 4)
    const none = wilson(0, 10)!
    expect(none.low).toBe(0)
    expect(none.high).toBeCloseTo(0.2775, 4)
    const all = wilson(10, 10)!
    expect(all.low).toBeCloseTo(0.7225, 4)
    expect(all.high).toBe(1)
    const half = wilson(50, 100)!
    expect(half.low).toBeCloseTo(0.4038, 4)
    expect(half.high).toBeCloseTo(0.5962, 4)
  })

  it("is null without answers", () => {
    expect(wilson(0, 0)).toBeNull()
  })

  it("holds the share, inside [0, 1], narrowing as answers grow", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 10_000 }), fc.double({ min: 0, max: 1, noNaN: true }), (total, share) => {
      const correct = Math.round(share * total)
      const { high, low } = wilson(correct, total)!
      expect(0 <= low && low <= correct / total && correct / total <= high && high <= 1).toBe(true)
      const larger = wilson(correct * 4, total * 4)!
      expect(larger.high - larger.low).toBeLessThan(high - low)
    }))
  })
})

describe("percentile", () => {
  it("is the nearest-rank value of the sorted values", () => {
    const values = [50, 15, 40, 20, 35]
    expect(percentile(values, 5)).toBe(15)
    expect(percentile(values, 30)).toBe(20)
    expect(percentile(values, 40)).toBe(20)
    expect(percentile(values, 50)).toBe(35)
    expect(percentile(values, 100)).toBe(50)
    expect(percentile([7], 50)).toBe(7)
    expect(percentile([3, 1], 50)).toBe(1)
    expect(values).toEqual([50, 15, 40, 20, 35])
  })

  it("is null for no values", () => {
    expect(percentile([], 50)).toBeNull()
  })

  it("is one of the values, with at least p% of them at or below it", () => {
    const values = fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 50 })
    fc.assert(fc.property(values, fc.integer({ min: 1, max: 100 }), (xs, p) => {
      const value = percentile(xs, p)!
      expect(xs).toContain(value)
      expect(xs.filter((x) => x <= value).length).toBeGreaterThanOrEqual((p / 100) * xs.length)
      expect(xs.filter((x) => x < value).length).toBeLessThan((p / 100) * xs.length)
    }))
  })
})

describe("rank", () => {
  it("gives competition ranks by score, equal scores sharing one, unscored last", () => {
    const ranked = rank([
      tally("a", 8, 10, 2),
      tally("b", 4, 5, 1),
      tally("c", 9, 10, 5),
      tally("d", 5, 10, 0),
      tally("e", 0, 0, 0),
      tally("f", 0, 3, 0)
    ])
    expect(ranked.map((r) => [r.leaderboard_model_id, r.rank, r.score])).toEqual([
      ["c", 1, 0.9],
      ["b", 2, 0.8],
      ["a", 2, 0.8],
      ["d", 4, 0.5],
      ["f", 5, 0],
      ["e", 6, null]
    ])
    const e = byId(ranked).get("e")!
    expect([e.score_low, e.score_high]).toEqual([null, null])
    const a = byId(ranked).get("a")!
    expect(a.score_low).toBeCloseTo(0.4902, 4)
    expect(a.score_high).toBeCloseTo(0.9433, 4)
  })

  it("keeps the input's other fields", () => {
    const [only] = rank([{ ...tally("a", 1, 2), label: "GPT" }])
    expect(only).toMatchObject({ label: "GPT", leaderboard_model_id: "a", rank: 1, score: 0.5 })
  })

  it("breaks ties by lower cost, then lower p50 latency, unknowns after knowns, then input order", () => {
    const ranked = rank([
      tally("unknown cost", 1, 2, null, 1),
      tally("slow", 1, 2, 1, 900),
      tally("unknown latency", 1, 2, 1, null),
      tally("fast", 1, 2, 1, 100),
      tally("cheap", 2, 4, 0.5, 5000),
      tally("fast too", 1, 2, 1, 100)
    ])
    expect(ranked.map((r) => r.leaderboard_model_id)).toEqual(["cheap", "fast", "fast too", "slow", "unknown latency", "unknown cost"])
    expect(ranked.every((r) => r.rank === 1)).toBe(true)
    expect(winnerOf(ranked)).toBe("cheap")
  })

  it("two unknown costs are a tie, broken by latency", () => {
    const ranked = rank([tally("slow", 1, 2, null, 900), tally("fast", 1, 2, null, 100), tally("unknown", 1, 2, null, null)])
    expect(ranked.map((r) => r.leaderboard_model_id)).toEqual(["fast", "slow", "unknown"])
  })

  it("has no winner when nobody has a score", () => {
    expect(winnerOf(rank([]))).toBeNull()
    const unscored = rank([tally("a", 0, 0, 1), tally("b", 0, 0, 2)])
    expect(unscored.map((r) => r.rank)).toEqual([1, 1])
    expect(winnerOf(unscored)).toBeNull()
  })

  it("ranks are competition ranks consistent with the scores, unscored last", () => {
    fc.assert(fc.property(tallies, (input) => {
      const ranked = rank(input)
      const scores = ranked.flatMap((r) => (r.score === null ? [] : [r.score]))
      expect(ranked.map((r) => r.leaderboard_model_id).sort()).toEqual(input.map((t) => t.leaderboard_model_id).sort())
      for (const r of ranked) {
        expect(r.rank).toBe(1 + (r.score === null ? scores.length : scores.filter((s) => s > r.score!).length))
        for (const other of ranked) {
          if (r.score === null || other.score === null) {
            if (r.score !== null) expect(r.rank).toBeLessThan(other.rank)
            if (r.score === null && other.score === null) expect(r.rank).toBe(other.rank)
          } else {
            expect(r.score > other.score).toBe(r.rank < other.rank)
            expect(r.score === other.score).toBe(r.rank === other.rank)
          }
        }
      }
      ranked.slice(1).forEach((r, i) => expect(ranked[i]!.rank).toBeLessThanOrEqual(r.rank))
    }))
  })

  it("each score lies within its interval", () => {
    fc.assert(fc.property(tallies, (input) => {
      for (const r of rank(input)) {
        if (r.score === null) expect([r.score_low, r.score_high]).toEqual([null, null])
        else expect(r.score_low! <= r.score && r.score <= r.score_high!).toBe(true)
      }
    }))
  })

  it("the winner has rank 1 and the lowest cost among rank 1, then the lowest latency", () => {
    fc.assert(fc.property(tallies, (input) => {
      const ranked = rank(input)
      const winner = winnerOf(ranked)
      const first = ranked.filter((r) => r.rank === 1)
      if (ranked.every((r) => r.score === null)) {
        expect(winner).toBeNull()
        return
      }
      const chosen = byId(ranked).get(winner!)!
      expect(chosen.rank).toBe(1)
      const costs = first.flatMap((r) => (r.total_cost_usd === null ? [] : [r.total_cost_usd]))
      expect(chosen.total_cost_usd).toBe(costs.length === 0 ? null : Math.min(...costs))
      const sameCost = first.filter((r) => r.total_cost_usd === chosen.total_cost_usd)
      const latencies = sameCost.flatMap((r) => (r.latency_ms_p50 === null ? [] : [r.latency_ms_p50]))
      expect(chosen.latency_ms_p50).toBe(latencies.length === 0 ? null : Math.min(...latencies))
    }))
  })

  it("a candidate's rank does not depend on the input order", () => {
    const shuffled = tallies.chain((input) =>
      fc.shuffledSubarray(input, { minLength: input.length, maxLength: input.length }).map((permuted) => [input, permuted] as const)
    )
    fc.assert(fc.property(shuffled, ([input, permuted]) => {
      const ranks = byId(rank(input))
      for (const r of rank(permuted)) expect(r.rank).toBe(ranks.get(r.leaderboard_model_id)!.rank)
    }))
  })
})
