import { assert, describe, it } from "@effect/vitest"
import type { ServingDecision } from "@podium/domain/leaderboards"
import type { PairwiseResult } from "@podium/domain/runs"
import { evalVerdict, formatP, resolveCandidate, servingCandidateOf } from "./EvalVerdict.ts"

const decision = (overrides: Partial<ServingDecision>): ServingDecision => ({
  action: "keep",
  from_candidate_id: "s",
  to_candidate_id: "s",
  reason: "kept",
  shared_rows: 60,
  p_value: null,
  difference: null,
  chosen_among_ties: false,
  ...overrides
})

const pair = (a: string, b: string, wins: number, losses: number, p_adjusted: number): PairwiseResult => ({
  a,
  b,
  shared_rows: 60,
  wins,
  losses,
  ties: 60 - wins - losses,
  p_value: p_adjusted,
  p_adjusted,
  difference: null
})

const run = (pairwise: ReadonlyArray<PairwiseResult>, serving: ServingDecision | null) => ({
  results: [],
  pairwise,
  serving_decision: serving
})

describe("evalVerdict", () => {
  it("reads the pair from the named candidate's side, whichever side of the pair it is", () => {
    // the named one is `b`: the pair's losses are its wins
    const asB = evalVerdict(run([pair("s", "x", 30, 0, 1e-9)], decision({})), [{ id: "x", name: "x" }], 0.05)
    assert.deepStrictEqual([asB.candidates[0]!.wins, asB.candidates[0]!.losses, asB.candidates[0]!.significantly_worse], [0, 30, true])
    assert.strictEqual(asB.exit_code, 1)
    // the named one is `a` and lost more than it won (ranked above on cost or order, say)
    const asA = evalVerdict(run([pair("x", "s", 2, 20, 0.001)], decision({})), [{ id: "x", name: "x" }], 0.05)
    assert.deepStrictEqual([asA.candidates[0]!.wins, asA.candidates[0]!.losses, asA.exit_code], [2, 20, 1])
  })

  it("is not worse when p is not below alpha, when it won more, when it serves, or when nothing serves", () => {
    const named = [{ id: "x", name: "x" }]
    assert.strictEqual(evalVerdict(run([pair("s", "x", 10, 2, 0.05)], decision({})), named, 0.05).exit_code, 0)
    assert.strictEqual(evalVerdict(run([pair("x", "s", 30, 0, 1e-9)], decision({})), named, 0.05).exit_code, 0)
    assert.strictEqual(evalVerdict(run([], decision({ from_candidate_id: "x", to_candidate_id: "x" })), named, 0.05).exit_code, 0)
    const none = evalVerdict(run([pair("s", "x", 30, 0, 1e-9)], decision({ action: "none", from_candidate_id: null, to_candidate_id: null })), named, 0.05)
    assert.deepStrictEqual([none.serving_candidate_id, none.exit_code], [null, 0])
  })

  it("weighs against the candidate serving before the run: a switch's from, a first's to", () => {
    assert.strictEqual(servingCandidateOf(decision({ action: "switch", from_candidate_id: "old", to_candidate_id: "new" })), "old")
    assert.strictEqual(servingCandidateOf(decision({ action: "first", from_candidate_id: null, to_candidate_id: "new" })), "new")
    assert.strictEqual(servingCandidateOf(null), null)
  })
})

describe("resolveCandidate", () => {
  const candidates = [{ id: "1", name: "a" }, { id: "2", name: "b" }, { id: "3", name: "b" }]
  it("takes an id, then a unique name, and says why otherwise", () => {
    assert.deepStrictEqual(resolveCandidate(candidates, "2"), { id: "2", name: "b" })
    assert.deepStrictEqual(resolveCandidate(candidates, "a"), { id: "1", name: "a" })
    assert.strictEqual(resolveCandidate(candidates, "b"), "--candidate b names 2 candidates: give its id (2, 3)")
    assert.match(String(resolveCandidate(candidates, "z")), /^--candidate z is neither the id nor the name/)
  })
})

describe("formatP", () => {
  it("shows four significant digits, and a bound below 0.0001", () => {
    assert.deepStrictEqual([formatP(0.5), formatP(0.012346), formatP(1.86e-9)], ["p = 0.5", "p = 0.01235", "p < 0.0001"])
  })
})
