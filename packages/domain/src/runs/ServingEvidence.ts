import {
  decideServing,
  type ServingDecision,
  type ServingPolicy
} from "../leaderboards/index.ts"
import { comparePaired } from "../shared/index.ts"
import type { CandidateResult, PairwiseResult } from "./Run.ts"
import type { CellVerdict } from "./RunRepository.ts"

/** What a run's end learns from its cells: the ranked results with their paired view, and the pairs. */
export interface PairedEvidence {
  readonly results: ReadonlyArray<CandidateResult>
  readonly pairwise: ReadonlyArray<PairwiseResult>
}

/**
 * The run's candidates compared in pairs on the rows both have a verdict for (row key: the row's
 * index; correct true, incorrect false, a cell without a verdict or with an error null, left out of
 * its pairs and counted as excluded), at level `alpha`. `ranked` keeps its order, ranks and scores;
 * each result gains its ties, rank band and scored and excluded rows.
 */
export const pairedEvidence = (
  ranked: ReadonlyArray<CandidateResult>,
  cells: ReadonlyArray<CellVerdict>,
  alpha: number
): PairedEvidence => {
  const verdicts = new Map<string, Map<string, boolean | null>>()
  for (const cell of cells) {
    let own = verdicts.get(cell.candidate_id)
    if (own === undefined) verdicts.set(cell.candidate_id, own = new Map())
    own.set(String(cell.row_index), cell.verdict === null ? null : cell.verdict === "correct")
  }
  const ids = ranked.map((r) => r.leaderboard_model_id)
  const compared = comparePaired(ids, verdicts, alpha)
  const results = ranked.map((result): CandidateResult => {
    const summary = compared.per_candidate.get(result.leaderboard_model_id)
    return {
      ...result,
      statistically_tied_with: summary?.statistically_tied_with ?? [],
      rank_band: summary?.rank_band ?? { best: 1, worst: ids.length },
      scored_rows: summary?.scored_rows ?? 0,
      excluded_rows: summary?.excluded_rows ?? 0
    }
  })
  const pairwise = compared.pairwise.map((pair): PairwiseResult => ({
    a: pair.a,
    b: pair.b,
    shared_rows: pair.shared_rows,
    wins: pair.wins,
    losses: pair.losses,
    ties: pair.ties,
    p_value: pair.p_value,
    p_adjusted: pair.p_adjusted,
    difference: pair.difference
  }))
  return { results, pairwise }
}

/** Answered calls per candidate: what a cost per call divides by. */
export const answeredCalls = (cells: ReadonlyArray<CellVerdict>): ReadonlyMap<string, number> => {
  const answered = new Map<string, number>()
  for (const cell of cells) if (cell.answered) answered.set(cell.candidate_id, (answered.get(cell.candidate_id) ?? 0) + 1)
  return answered
}

export interface RunServingInput {
  readonly policy: ServingPolicy
  /** The candidate the leaderboard's ranking serves now (null: none). */
  readonly serving: string | null
  /** The serving candidate's name, when it is on the leaderboard but the run did not ask it. */
  readonly servingName: string | null
  readonly evidence: PairedEvidence
  readonly answered: ReadonlyMap<string, number>
  /** The leaderboard's manual choice when its strategy is `manual`: it serves whatever the ranking decides. */
  readonly manualChoice: { readonly name: string } | null
}

/**
 * The run's decision about serving (decideServing over the ranked results, cost per call = total cost
 * / answered calls, null when unknown). A serving candidate the run did not ask is kept: the run says
 * nothing about it. Under the `manual` strategy the decision is the ranking's, and its reason says the
 * manual choice serves.
 */
export const runServingDecision = (input: RunServingInput): ServingDecision => {
  const { evidence } = input
  const asked = evidence.results.some((r) => r.leaderboard_model_id === input.serving)
  const decided: ServingDecision = input.serving !== null && !asked
    ? {
      action: "keep",
      from_candidate_id: input.serving,
      to_candidate_id: input.serving,
      reason: `kept ${input.servingName ?? input.serving}: the run did not ask it`,
      shared_rows: 0,
      p_value: null,
      difference: null,
      chosen_among_ties: false
    }
    : decideServing({
      policy: input.policy,
      serving: input.serving,
      candidates: evidence.results.map((r) => {
        const calls = input.answered.get(r.leaderboard_model_id) ?? 0
        return {
          id: r.leaderboard_model_id,
          name: r.name,
          score: r.score,
          cost_per_call: r.total_cost_usd === null || calls === 0 ? null : r.total_cost_usd / calls
        }
      }),
      pairs: evidence.pairwise,
      tiedWith: (id) => evidence.results.find((r) => r.leaderboard_model_id === id)?.statistically_tied_with ?? []
    })
  return input.manualChoice === null
    ? decided
    : { ...decided, reason: `the manual choice, ${input.manualChoice.name}, serves; the ranking's decision: ${decided.reason}` }
}
