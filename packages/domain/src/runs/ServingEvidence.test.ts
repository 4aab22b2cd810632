import { describe, expect, it } from "vitest"
import { defaultServingPolicy } from "../leaderboards/index.ts"
import type { CandidateResult } from "./Run.ts"
import type { CellVerdict } from "./RunRepository.ts"
import { answeredCalls, pairedEvidence, runServingDecision } from "./ServingEvidence.ts"

const result = (id: string, correct: number, total: number, rank: number, total_cost_usd: number | null = null): CandidateResult => ({
  leaderboard_model_id: id,
  name: `model ${id}`,
  correct,
  total,
  score: total === 0 ? null : correct / total,
  score_low: null,
  score_high: null,
  rank,
  latency_ms_p50: null,
  latency_ms_p95: null,
  total_cost_usd,
  errors: 0
})

const cell = (candidate_id: string, row_index: number, verdict: CellVerdict["verdict"], answered = true): CellVerdict => ({
  row_index,
  candidate_id,
  verdict,
  answered
})

/**
 * a: right on rows 0-8, row 9 a failed call (no verdict); b: right on 0-4, wrong on 5-9; c: wrong on 0-1.
 * a–b share rows 0-8: 4 won, 0 lost; a–c and b–c share rows 0-1: 2 won, 0 lost.
 */
const cells: ReadonlyArray<CellVerdict> = [
  ...Array.from({ length: 9 }, (_, row) => cell("a", row, "correct")),
  cell("a", 9, null, false),
  ...Array.from({ length: 10 }, (_, row) => cell("b", row, row < 5 ? "correct" : "incorrect")),
  cell("c", 0, "incorrect"),
  cell("c", 1, "incorrect")
]
const ranked = [result("a", 9, 9, 1, 0.9), result("b", 5, 10, 2, 0.2), result("c", 0, 2, 3)]

describe("pairedEvidence", () => {
  const evidence = pairedEvidence(ranked, cells, 0.05)

  it("keeps the ranking as it is and adds each candidate's scored and excluded rows, ties and rank band", () => {
    expect(evidence.results.map((r) => [r.leaderboard_model_id, r.rank, r.score])).toEqual(ranked.map((r) => [r.leaderboard_model_id, r.rank, r.score]))
    expect(evidence.results.map((r) => [r.scored_rows, r.excluded_rows])).toEqual([[9, 1], [10, 0], [2, 0]])
    // nothing significant at 0.05 (the smallest Holm-adjusted p is 0.375): all tied, every band 1-3
    expect(evidence.results.map((r) => r.statistically_tied_with)).toEqual([["b", "c"], ["a", "c"], ["a", "b"]])
    expect(evidence.results.map((r) => r.rank_band)).toEqual([{ best: 1, worst: 3 }, { best: 1, worst: 3 }, { best: 1, worst: 3 }])
  })

  it("compares every pair on the rows both have a verdict for, the failed call left out", () => {
    // SciPy: binomtest(4, 4).pvalue = 0.125, binomtest(2, 2).pvalue = 0.5; Holm over [0.125, 0.5, 0.5]:
    // 0.125 × 3 = 0.375, then max(0.375, 0.5 × 2) = 1, then max(1, 0.5 × 1) = 1
    expect(evidence.pairwise.map(({ a, b, losses, p_adjusted, p_value, shared_rows, ties, wins }) => ({ a, b, shared_rows, wins, losses, ties, p_value, p_adjusted })))
      .toEqual([
        { a: "a", b: "b", shared_rows: 9, wins: 4, losses: 0, ties: 5, p_value: 0.125, p_adjusted: 0.375 },
        { a: "a", b: "c", shared_rows: 2, wins: 2, losses: 0, ties: 0, p_value: 0.5, p_adjusted: 1 },
        { a: "b", b: "c", shared_rows: 2, wins: 2, losses: 0, ties: 0, p_value: 0.5, p_adjusted: 1 }
      ])
    expect(evidence.pairwise[0]!.difference!.estimate).toBeCloseTo(4 / 9, 12)
  })

  it("gives a candidate without cells no scored rows and no shared rows", () => {
    const lonely = pairedEvidence([...ranked, result("d", 0, 0, 4)], cells, 0.05)
    expect(lonely.results[3]).toMatchObject({ scored_rows: 0, excluded_rows: 0 })
    expect(lonely.pairwise.filter((p) => p.b === "d").map((p) => [p.shared_rows, p.difference])).toEqual([[0, null], [0, null], [0, null]])
  })
})

describe("runServingDecision", () => {
  const evidence = pairedEvidence(ranked, cells, 0.05)
  const answered = answeredCalls(cells)
  const input = { policy: defaultServingPolicy, serving: null, servingName: null, evidence, answered, manualChoice: null }

  it("counts answered calls, the failed call not among them", () => {
    expect([...answered]).toEqual([["a", 9], ["b", 10], ["c", 2]])
  })

  it("serves first the cheapest per answered call of those tied with the best score", () => {
    // a: $0.9 / 9 = $0.1 a call; b: $0.2 / 10 = $0.02; c: cost unknown
    expect(runServingDecision(input)).toMatchObject({ action: "first", to_candidate_id: "b", chosen_among_ties: true })
  })

  it("keeps a serving candidate the run did not ask, and says so", () => {
    expect(runServingDecision({ ...input, serving: "z", servingName: "model z" })).toEqual({
      action: "keep",
      from_candidate_id: "z",
      to_candidate_id: "z",
      reason: "kept model z: the run did not ask it",
      shared_rows: 0,
      p_value: null,
      difference: null,
      chosen_among_ties: false
    })
  })

  it("keeps the serving candidate on too few shared rows, p named", () => {
    const kept = runServingDecision({ ...input, serving: "b", servingName: "model b" })
    expect(kept).toMatchObject({ action: "keep", from_candidate_id: "b", to_candidate_id: "b", shared_rows: 9, p_value: 0.375 })
    expect(kept.reason).toBe("kept model b: model a is not significantly better, p = 0.38 on 9 shared rows, 30 needed")
  })

  it("under manual, says the manual choice serves", () => {
    const decided = runServingDecision({ ...input, manualChoice: { name: "model c" } })
    expect(decided.action).toBe("first")
    expect(decided.reason).toMatch(/^the manual choice, model c, serves; the ranking's decision: first to serve: /)
  })
})
