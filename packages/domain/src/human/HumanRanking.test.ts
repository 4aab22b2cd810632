import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { ResponseStatus, Verdict } from "./HumanEval.ts"
import {
  fromTallies,
  rank,
  type RankedCase,
  type RankedResponse,
  type RankingCandidate,
  type RankingRow,
  tally,
  wilson,
  winner
} from "./HumanRanking.ts"

const answer = (candidate_id: string, verdict: Verdict | null, cost_usd: number | null = null): RankedResponse => ({
  candidate_id,
  status: "succeeded",
  cost_usd,
  verdict
})
const failure = (candidate_id: string): RankedResponse => ({ candidate_id, status: "failed", cost_usd: null, verdict: null })
const confirmed = (...responses: Array<RankedResponse>): RankedCase => ({ confirmed: true, responses })
const unconfirmed = (...responses: Array<RankedResponse>): RankedCase => ({ confirmed: false, responses })

const rowOf = (rows: ReadonlyArray<RankingRow>, id: string): RankingRow => {
  const row = rows.find((r) => r.leaderboard_model_id === id)
  if (row === undefined) throw new Error(`no row for ${id}`)
  return row
}

describe("human ranking, by example", () => {
  it("equal scores share a rank and the next rank skips (1, 1, 3); a tie at the top has no winner", () => {
    const candidates = [{ id: "a", name: "Zed" }, { id: "b", name: "Amy" }, { id: "c", name: "Cat" }]
    const ranking = rank(candidates, [
      confirmed(answer("a", "correct"), answer("b", "correct"), answer("c", "incorrect")),
      confirmed(answer("a", "correct"), answer("b", "correct"), answer("c", "correct"))
    ])
    expect(ranking.rows.map((r) => [r.leaderboard_model_id, r.correct, r.total, r.score, r.rank])).toEqual([
      ["b", 2, 2, 1, 1],
      ["a", 2, 2, 1, 1],
      ["c", 1, 2, 0.5, 3]
    ])
    expect([ranking.confirmed, ranking.comparable]).toEqual([2, 2])
    expect(winner(ranking)).toBe(null)
  })

  it("equal ranks are ordered by name, then by id, whatever the input order", () => {
    const candidates = [{ id: "z", name: "Cat" }, { id: "y", name: "Bob" }, { id: "x2", name: "Amy" }, { id: "x1", name: "Amy" }]
    const ranking = rank(candidates, [confirmed(...candidates.map((c) => answer(c.id, "correct")))])
    expect(ranking.rows.map((r) => r.leaderboard_model_id)).toEqual(["x1", "x2", "y", "z"])
  })

  it("without candidates no case is comparable", () => {
    expect(rank([], [confirmed(answer("a", "correct"))])).toMatchObject({ confirmed: 1, comparable: 0, rows: [], common_rows: [] })
  })

  it("the Wilson 95% interval of 8/10 is about [0.490, 0.943]", () => {
    const interval = wilson(8, 10)!
    expect(interval.low).toBeCloseTo(0.4902, 4)
    expect(interval.high).toBeCloseTo(0.9433, 4)
    const row = rank([{ id: "a", name: "A" }], Array.from({ length: 10 }, (_, i) => confirmed(answer("a", i < 8 ? "correct" : "incorrect"))))
      .rows[0]!
    expect([row.score, row.score_low, row.score_high]).toEqual([0.8, interval.low, interval.high])
    expect(wilson(0, 5)!.low).toBe(0)
    expect(wilson(5, 5)!.high).toBe(1)
    expect(wilson(0, 0)).toBe(null)
  })

  it("an unreviewed case's costs count but its verdicts don't; failures count only as technical errors", () => {
    const ranking = rank([{ id: "a", name: "A" }], [
      unconfirmed(answer("a", "correct", 0.25)),
      confirmed(answer("a", "correct", 0.75)),
      unconfirmed(failure("a")),
      unconfirmed(answer("a", null, null))
    ])
    expect(ranking.rows[0]).toMatchObject({
      correct: 1, total: 1, total_cost_usd: 1, cost_samples: 2, cost_missing: 1, average_cost_usd: 0.5, technical_errors: 1
    })
    expect(ranking.common_rows[0]).toMatchObject({
      correct: 1, total: 1, total_cost_usd: 0.75, cost_samples: 1, cost_missing: 0, technical_errors: 0
    })
    expect([ranking.confirmed, ranking.comparable]).toEqual([1, 1])
  })

  it("costs are summed exactly: 0.01 + 0.02 + 0.02 is 0.05, ten times 0.1 is 1 (as floats, 0.9999999999999999)", () => {
    const ranking = rank([{ id: "a", name: "A" }, { id: "b", name: "B" }], [
      ...[0.01, 0.02, 0.02].map((cost) => confirmed(answer("a", "correct", cost))),
      ...Array.from({ length: 10 }, () => confirmed(answer("b", "correct", 0.1)))
    ])
    expect(rowOf(ranking.rows, "a")).toMatchObject({ total_cost_usd: 0.05, cost_samples: 3 })
    expect(rowOf(ranking.rows, "b")).toMatchObject({ total_cost_usd: 1, average_cost_usd: 0.1 })
  })

  it("an abstention is not an answer, and keeps its case out of the common rows", () => {
    const candidates = [{ id: "a", name: "A" }, { id: "b", name: "B" }]
    const ranking = rank(candidates, [
      confirmed(answer("a", "abstain"), answer("b", "correct")),
      confirmed(answer("a", "correct"), answer("b", "incorrect"))
    ])
    expect([rowOf(ranking.rows, "a").total, rowOf(ranking.rows, "b").total]).toEqual([1, 2])
    expect(ranking.comparable).toBe(1)
    expect(ranking.common_rows.map((r) => [r.leaderboard_model_id, r.correct, r.total, r.rank])).toEqual([["a", 1, 1, 1], ["b", 0, 1, 2]])
    expect(winner(ranking)).toBe("a")
  })

  it("a candidate without reviewed answers has no score, interval or rank, and comes last", () => {
    const ranking = rank([{ id: "a", name: "Alpha" }, { id: "b", name: "Beta" }], [confirmed(answer("a", "abstain"), answer("b", "incorrect"))])
    expect(ranking.rows.map((r) => [r.leaderboard_model_id, r.score, r.score_low, r.score_high, r.rank])).toEqual([
      ["b", 0, 0, wilson(0, 1)!.high, 1],
      ["a", null, null, null, null]
    ])
  })
})

// Random inputs: 1-8 candidates (names repeat, so the tie-break by id is exercised), 0-40 cases,
// each candidate answering a case zero, one or two times, plus a stray response of a stranger.
const judgedVerdict = fc.constantFrom<Verdict>("correct", "incorrect")
const response = fc.record({
  status: fc.oneof({ weight: 19, arbitrary: fc.constant<ResponseStatus>("succeeded") }, { weight: 1, arbitrary: fc.constant<ResponseStatus>("failed") }),
  cost_usd: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: null, freq: 4 }),
  verdict: fc.oneof({ weight: 9, arbitrary: judgedVerdict }, { weight: 1, arbitrary: fc.constantFrom<Verdict | null>("abstain", null) })
})
const slot = fc.oneof(
  { weight: 1, arbitrary: fc.constant([]) },
  { weight: 20, arbitrary: fc.array(response, { minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.array(response, { minLength: 2, maxLength: 2 }) }
)
const input = fc
  .array(fc.constantFrom("Ada", "Bo", "Cy"), { minLength: 1, maxLength: 8 })
  .map((names) => names.map((name, i): RankingCandidate => ({ id: `m${i}`, name })))
  .chain((candidates) => {
    const evalCase = fc
      .record({
        confirmed: fc.boolean(),
        slots: fc.array(slot, { minLength: candidates.length, maxLength: candidates.length }),
        strays: fc.array(response, { maxLength: 1 })
      })
      .map(({ confirmed, slots, strays }): RankedCase => ({
        confirmed,
        responses: [
          ...slots.flatMap((responses, i) => responses.map((r) => ({ ...r, candidate_id: candidates[i]!.id }))),
          ...strays.map((r) => ({ ...r, candidate_id: "stranger" }))
        ]
      }))
    return fc.record({ candidates: fc.constant(candidates), cases: fc.array(evalCase, { maxLength: 40 }) })
  })

// An independent, naive restatement of the rules.
const isJudged = (r: RankedResponse) => r.status === "succeeded" && (r.verdict === "correct" || r.verdict === "incorrect")
const comparableCases = (candidates: ReadonlyArray<RankingCandidate>, cases: ReadonlyArray<RankedCase>) =>
  cases.filter(
    (c) =>
      c.confirmed &&
      candidates.length > 0 &&
      candidates.every(
        ({ id }) => c.responses.filter((r) => r.candidate_id === id).length === 1 && c.responses.some((r) => r.candidate_id === id && isJudged(r))
      )
  )
const naiveRow = (id: string, cases: ReadonlyArray<RankedCase>) => {
  const reviewed = cases.filter((c) => c.confirmed).flatMap((c) => c.responses).filter((r) => r.candidate_id === id && isJudged(r))
  const all = cases.flatMap((c) => c.responses).filter((r) => r.candidate_id === id)
  const costs = all.filter((r) => r.status === "succeeded").map((r) => r.cost_usd)
  const known = costs.filter((cost) => cost !== null)
  const total_cost_usd = known.reduce((sum, cost) => sum + cost, 0)
  return {
    correct: reviewed.filter((r) => r.verdict === "correct").length,
    total: reviewed.length,
    total_cost_usd,
    average_cost_usd: known.length === 0 ? null : total_cost_usd / known.length,
    cost_samples: known.length,
    cost_missing: costs.length - known.length,
    technical_errors: all.filter((r) => r.status === "failed").length
  }
}
const expectRow = (row: RankingRow, expected: ReturnType<typeof naiveRow>) => {
  const { total_cost_usd, average_cost_usd, ...counts } = expected
  expect(row).toMatchObject(counts)
  expect(row.total_cost_usd).toBeCloseTo(total_cost_usd, 9)
  if (average_cost_usd === null) expect(row.average_cost_usd).toBe(null)
  else expect(row.average_cost_usd).toBeCloseTo(average_cost_usd, 9)
}

const bothTables = (ranking: ReturnType<typeof rank>) => [ranking.rows, ranking.common_rows]

describe("human ranking, for any input", () => {
  it("property: one row per candidate; counts and costs match a naive recount over all cases, unconfirmed ones included", () => {
    fc.assert(fc.property(input, ({ candidates, cases }) => {
      const ranking = rank(candidates, cases)
      expect(ranking.rows.map((r) => r.leaderboard_model_id).toSorted()).toEqual(candidates.map((c) => c.id).toSorted())
      for (const { id } of candidates) expectRow(rowOf(ranking.rows, id), naiveRow(id, cases))
    }))
  })

  it("property: common rows count exactly the comparable cases", () => {
    fc.assert(fc.property(input, ({ candidates, cases }) => {
      const ranking = rank(candidates, cases)
      const common = comparableCases(candidates, cases)
      expect(ranking.comparable).toBe(common.length)
      expect(ranking.confirmed).toBe(cases.filter((c) => c.confirmed).length)
      for (const { id } of candidates) {
        const row = rowOf(ranking.common_rows, id)
        expectRow(row, naiveRow(id, common))
        expect(row.total).toBe(common.length)
        expect(row.technical_errors).toBe(0)
      }
    }))
  })

  it("property: a score is correct/total in [0, 1], null exactly when nothing was reviewed, inside its interval in [0, 1]", () => {
    fc.assert(fc.property(input, ({ candidates, cases }) => {
      for (const row of bothTables(rank(candidates, cases)).flat()) {
        if (row.total === 0) {
          expect([row.score, row.score_low, row.score_high]).toEqual([null, null, null])
        } else {
          expect(row.score).toBe(row.correct / row.total)
          expect(0).toBeLessThanOrEqual(row.score_low!)
          expect(row.score_low!).toBeLessThanOrEqual(row.score!)
          expect(row.score!).toBeLessThanOrEqual(row.score_high!)
          expect(row.score_high!).toBeLessThanOrEqual(1)
        }
      }
    }))
  })

  it("property: ranks follow scores (ties share a rank, 1224) and rows are sorted by rank, unranked last, then name and id", () => {
    fc.assert(fc.property(input, ({ candidates, cases }) => {
      for (const rows of bothTables(rank(candidates, cases))) {
        for (const a of rows) {
          expect(a.rank === null).toBe(a.score === null)
          if (a.score === null) continue
          expect(a.rank).toBe(1 + rows.filter((b) => b.score !== null && b.score > a.score!).length)
          for (const b of rows) {
            if (b.score !== null && a.score > b.score) expect(a.rank!).toBeLessThan(b.rank!)
            if (a.score === b.score) expect(a.rank).toBe(b.rank)
          }
        }
        for (const [a, b] of rows.slice(1).map((b, i) => [rows[i]!, b] as const)) {
          const [ra, rb] = [a.rank ?? Infinity, b.rank ?? Infinity]
          expect(ra).toBeLessThanOrEqual(rb)
          if (ra === rb) expect(a.name <= b.name).toBe(true)
          if (ra === rb && a.name === b.name) expect(a.leaderboard_model_id < b.leaderboard_model_id).toBe(true)
        }
      }
    }))
  })

  it("property: rank is fromTallies after tally, the tallies add up, and the input is left alone", () => {
    fc.assert(fc.property(input, ({ candidates, cases }) => {
      const before = structuredClone(cases)
      const tallies = tally(candidates, cases)
      expect(rank(candidates, cases)).toEqual(fromTallies(candidates, tallies))
      expect(cases).toEqual(before)
      const sum = (map: ReadonlyMap<string, { readonly total: number }>) => [...map.values()].reduce((s, t) => s + t.total, 0)
      const known = new Set(candidates.map((c) => c.id))
      const reviewed = cases.filter((c) => c.confirmed).flatMap((c) => c.responses).filter((r) => known.has(r.candidate_id) && isJudged(r))
      expect(sum(tallies.rows)).toBe(reviewed.length)
      expect(sum(tallies.common)).toBe(candidates.length * tallies.comparable)
      for (const { id } of candidates) {
        const t = tallies.rows.get(id)!
        const responses = cases.flatMap((c) => c.responses).filter((r) => r.candidate_id === id)
        expect(t.cost_samples + t.cost_missing + t.technical_errors).toBe(responses.length)
      }
    }))
  })

  it("property: the winner is the single first of the common rows, and a twin (same answers everywhere) denies it", () => {
    fc.assert(fc.property(input, fc.nat(), ({ candidates, cases }, pick) => {
      const ranking = rank(candidates, cases)
      const first = ranking.common_rows.filter((r) => r.rank === 1)
      expect(winner(ranking)).toBe(first.length === 1 ? first[0]!.leaderboard_model_id : null)

      const original = candidates[pick % candidates.length]!
      const twin = { id: "twin", name: original.name }
      const withTwin = cases.map((c) => ({
        ...c,
        responses: [...c.responses, ...c.responses.filter((r) => r.candidate_id === original.id).map((r) => ({ ...r, candidate_id: twin.id }))]
      }))
      const twinned = winner(rank([...candidates, twin], withTwin))
      expect(twinned === original.id || twinned === twin.id).toBe(false)
    }))
  })
})
