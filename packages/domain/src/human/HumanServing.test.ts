import { DateTime } from "effect"
import { describe, expect, it } from "vitest"
import { defaultServingPolicy, ServingEntryId, type ServingPolicy } from "../leaderboards/index.ts"
import { LeaderboardId } from "../leaderboards/index.ts"
import { WorkspaceId } from "../shared/index.ts"
import type { Verdict } from "./HumanEval.ts"
import { rank, type RankedResponse } from "./HumanRanking.ts"
import { changesServing, commonVerdicts, humanServing, humanServingEntry, type VerdictCase } from "./HumanServing.ts"

const A = "00000000-0000-4000-8000-00000000000a"
const B = "00000000-0000-4000-8000-00000000000b"
const C = "00000000-0000-4000-8000-00000000000c"
const candidates = [{ id: A, name: "A" }, { id: B, name: "B" }, { id: C, name: "C" }]
/** Per call: C is the cheapest, then B, then A. */
const cost: Record<string, number> = { [A]: 0.003, [B]: 0.001, [C]: 0.0005 }

const answer = (candidate_id: string, verdict: Verdict): RankedResponse => ({
  candidate_id,
  status: "succeeded",
  cost_usd: cost[candidate_id]!,
  verdict
})
const R = "correct" as const
const W = "incorrect" as const
const aCase = (case_id: string, a: Verdict, b: Verdict, c: Verdict): VerdictCase => ({
  case_id,
  responses: [answer(A, a), answer(B, b), answer(C, c)]
})

/**
 * Six common cases, A B C each right (R) or wrong (W):
 *
 *   case  1 2 3 4 5 6
 *   A     R R R R R R   6/6
 *   B     R W W R W W   2/6
 *   C     W W W W W W   0/6
 *
 * and two that are not common: C abstains on 7, C's call failed on 8.
 * A–B: 4 wins, 0 losses, 2 ties; A–C: 6, 0, 0; B–C: 2, 0, 4.
 */
const cases: ReadonlyArray<VerdictCase> = [
  aCase("case-1", R, R, W),
  aCase("case-2", R, W, W),
  aCase("case-3", R, W, W),
  aCase("case-4", R, R, W),
  aCase("case-5", R, W, W),
  aCase("case-6", R, W, W),
  aCase("case-7", R, R, "abstain"),
  { case_id: "case-8", responses: [answer(A, R), answer(B, W), { candidate_id: C, status: "failed", cost_usd: null, verdict: null }] }
]

const ranking = rank(candidates, cases.map((c) => ({ confirmed: true, responses: c.responses })))
const verdicts = commonVerdicts(candidates, cases)
const policy: ServingPolicy = { ...defaultServingPolicy, alpha: 0.1, min_rows: 6 }
const decide = (serving: string | null, over: Partial<ServingPolicy> = {}) =>
  humanServing({ candidates, ranking, verdicts, policy: { ...policy, ...over }, serving })

/*
 * Exact McNemar p-values, from SciPy 1.17.1:
 *   python3 -c "from scipy.stats import binomtest; print([float(binomtest(k, n, 0.5).pvalue) for k, n in [(0, 4), (0, 6), (0, 2)]])"
 *   [0.125, 0.03125, 0.5]
 * Holm over the three (by hand): 0.03125·3 = 0.09375, max(0.09375, 0.125·2) = 0.25, max(0.25, 0.5·1) = 0.5.
 */
const p = { ab: 0.125, ac: 0.03125, bc: 0.5 }
const adjusted = { ab: 0.25, ac: 0.09375, bc: 0.5 }

describe("the human ranking's paired view", () => {
  it("pairs only the common cases, keyed by case id", () => {
    expect(ranking.comparable).toBe(6)
    const common = ["case-1", "case-2", "case-3", "case-4", "case-5", "case-6"]
    for (const id of [A, B, C]) expect([...verdicts.get(id)!.keys()]).toEqual(common)
    expect([...verdicts.get(B)!.values()]).toEqual([true, false, false, true, false, false])
  })

  it("pairwise: wins, losses, ties, exact McNemar p and Holm-adjusted p, at the policy's alpha", () => {
    const { paired } = decide(null)
    expect(paired.alpha).toBe(0.1)
    expect(paired.pairwise.map(({ a, b, losses, p_adjusted, p_value, ties, wins }) => ({ a, b, wins, losses, ties, p_value, p_adjusted })))
      .toEqual([
        { a: A, b: B, wins: 4, losses: 0, ties: 2, p_value: p.ab, p_adjusted: adjusted.ab },
        { a: A, b: C, wins: 6, losses: 0, ties: 0, p_value: p.ac, p_adjusted: adjusted.ac },
        { a: B, b: C, wins: 2, losses: 0, ties: 4, p_value: p.bc, p_adjusted: adjusted.bc }
      ])
    // the difference of scores: (wins − losses) / 6, its interval around it
    const estimates = paired.pairwise.map((pair) => pair.difference!.estimate)
    expect(estimates[0]).toBeCloseTo(4 / 6, 12)
    expect(estimates[1]).toBe(1)
    expect(estimates[2]).toBeCloseTo(2 / 6, 12)
    for (const { difference } of paired.pairwise) {
      expect(difference!.low).toBeLessThanOrEqual(difference!.estimate)
      expect(difference!.high).toBeGreaterThanOrEqual(difference!.estimate)
    }
  })

  it("ties and rank bands: only A–C differs at alpha 0.1 (0.09375), none at 0.05", () => {
    expect(decide(null).paired.candidates).toEqual([
      { leaderboard_model_id: A, statistically_tied_with: [B], rank_band: { best: 1, worst: 2 } },
      { leaderboard_model_id: B, statistically_tied_with: [A, C], rank_band: { best: 1, worst: 3 } },
      { leaderboard_model_id: C, statistically_tied_with: [B], rank_band: { best: 2, worst: 3 } }
    ])
    expect(decide(null, { alpha: 0.05 }).paired.candidates).toEqual([
      { leaderboard_model_id: A, statistically_tied_with: [B, C], rank_band: { best: 1, worst: 3 } },
      { leaderboard_model_id: B, statistically_tied_with: [A, C], rank_band: { best: 1, worst: 3 } },
      { leaderboard_model_id: C, statistically_tied_with: [A, B], rank_band: { best: 1, worst: 3 } }
    ])
  })

  it("nothing serving: the first is the cheapest of those tied with the best, B (0.001 per call against A's 0.003)", () => {
    const { decision } = decide(null)
    expect(decision).toMatchObject({ action: "first", from_candidate_id: null, to_candidate_id: B, chosen_among_ties: true, shared_rows: 6 })
    // B against A: 0 wins, 4 losses
    expect(decision.p_value).toBe(adjusted.ab)
    expect(changesServing(decision)).toBe(true)
  })

  it("C serving: A switches in on 6 shared rows with p 0.09375 < 0.1; with 7 rows needed, or at alpha 0.05, C is kept", () => {
    const switched = decide(C).decision
    expect(switched).toMatchObject({ action: "switch", from_candidate_id: C, to_candidate_id: A, shared_rows: 6, p_value: adjusted.ac })
    expect(changesServing(switched)).toBe(true)
    const tooFew = decide(C, { min_rows: 7 }).decision
    expect(tooFew).toMatchObject({ action: "keep", from_candidate_id: C, to_candidate_id: C, shared_rows: 6 })
    expect(tooFew.reason).toContain("6 shared rows, 7 needed")
    expect(changesServing(tooFew)).toBe(false)
    expect(decide(C, { alpha: 0.05 }).decision).toMatchObject({ action: "keep", to_candidate_id: C })
  })

  it("B serving: A is not significantly better (0.25), so B is kept", () => {
    const { decision } = decide(B)
    expect(decision).toMatchObject({ action: "keep", to_candidate_id: B, shared_rows: 6, p_value: adjusted.ab })
    expect(changesServing(decision)).toBe(false)
  })

  it("a change is recorded as a human entry with its evidence", () => {
    const { decision } = decide(C)
    const at = DateTime.makeUnsafe("2026-11-27T20:00:00.000Z")
    const entry = humanServingEntry({
      entry: { id: ServingEntryId.make("00000000-0000-4000-8000-000000000001"), at, actor: { type: "system", id: "test" } },
      workspace_id: WorkspaceId.make("00000000-0000-4000-8000-000000000002"),
      leaderboard_id: LeaderboardId.make("00000000-0000-4000-8000-000000000003"),
      decision,
      policy,
      comparable: ranking.comparable
    })
    expect(entry).toMatchObject({ kind: "human", from_candidate_id: C, to_candidate_id: A, reason: decision.reason })
    expect(entry.evidence).toEqual({
      action: "switch",
      comparable_cases: 6,
      shared_rows: 6,
      p_value: adjusted.ac,
      difference: decision.difference,
      chosen_among_ties: false,
      policy
    })
  })
})
