import type { DateTime } from "effect"
import {
  CandidateId,
  decideServing,
  type LeaderboardId,
  type ServingActor,
  type ServingDecision,
  type ServingEntryId,
  ServingHistoryEntry,
  type ServingPolicy
} from "../leaderboards/index.ts"
import { comparePaired, type PairedDifference, type RankBand, type WorkspaceId } from "../shared/index.ts"
import { type RankedResponse, type Ranking, type RankingCandidate, tally } from "./HumanRanking.ts"

/**
 * The human ranking's paired view and its serving decision. The common rows' cases (confirmed,
 * every candidate with one `correct`/`incorrect` verdict) pair the candidates case by case: each
 * pair gets the exact McNemar test, Holm-adjusted over all pairs, at the leaderboard's policy
 * alpha; and `decideServing` says whether the ranking's winner (`ranking_winner`) changes.
 */

/** A confirmed case with its responses' verdicts: what the pairing reads. */
export interface VerdictCase {
  readonly case_id: string
  readonly responses: ReadonlyArray<RankedResponse>
}

/**
 * Right (true) or wrong (false) by candidate, then by case id, over the common cases only
 * (HumanRanking's rule: the case is comparable for these candidates).
 */
export const commonVerdicts = (
  candidates: ReadonlyArray<RankingCandidate>,
  cases: ReadonlyArray<VerdictCase>
): ReadonlyMap<string, ReadonlyMap<string, boolean>> => {
  const out = new Map(candidates.map(({ id }) => [id, new Map<string, boolean>()]))
  for (const c of cases) {
    // the ranking's own test of a common case, so the pairs cover exactly the common rows
    if (tally(candidates, [{ confirmed: true, responses: c.responses }]).comparable !== 1) continue
    for (const response of c.responses) out.get(response.candidate_id)?.set(c.case_id, response.verdict === "correct")
  }
  return out
}

export interface PairedCandidate {
  readonly leaderboard_model_id: string
  /** The other candidates whose pair with this one has Holm-adjusted p >= alpha, in cohort order. */
  readonly statistically_tied_with: ReadonlyArray<string>
  readonly rank_band: RankBand
}

export interface HumanPair {
  readonly a: string
  readonly b: string
  /** Common cases a got right and b wrong. */
  readonly wins: number
  /** Common cases a got wrong and b right. */
  readonly losses: number
  /** Common cases both got right or both wrong. */
  readonly ties: number
  readonly p_value: number
  readonly p_adjusted: number
  /** a's score minus b's over the common cases, with Newcombe's 95% interval; null without common cases. */
  readonly difference: PairedDifference | null
}

export interface HumanPaired {
  readonly alpha: number
  readonly candidates: ReadonlyArray<PairedCandidate>
  readonly pairwise: ReadonlyArray<HumanPair>
}

export interface HumanServing {
  readonly paired: HumanPaired
  /** What the policy decides now, with `serving` the candidate the ranking serves. */
  readonly decision: ServingDecision
}

/**
 * The paired comparison of `candidates` (in their order) over the common cases' verdicts and the
 * decision of `policy` given `serving` (the stored `ranking_winner`), the candidates ranked by
 * their common-row score and priced by its average cost.
 */
export const humanServing = (input: {
  readonly candidates: ReadonlyArray<RankingCandidate>
  readonly ranking: Ranking
  readonly verdicts: ReadonlyMap<string, ReadonlyMap<string, boolean>>
  readonly policy: ServingPolicy
  readonly serving: string | null
}): HumanServing => {
  const { policy } = input
  const ids = input.candidates.map((c) => c.id)
  const compared = comparePaired(ids, input.verdicts, policy.alpha)
  const pairwise = compared.pairwise.map(({ a, b, difference, losses, p_adjusted, p_value, ties, wins }) => ({
    a, b, wins, losses, ties, p_value, p_adjusted, difference
  }))
  const decision = decideServing({
    policy,
    serving: input.serving,
    candidates: input.ranking.common_rows.map((row) => ({
      id: row.leaderboard_model_id,
      name: row.name,
      score: row.score,
      cost_per_call: row.average_cost_usd
    })),
    pairs: compared.pairwise,
    tiedWith: (id) => compared.per_candidate.get(id)?.statistically_tied_with ?? []
  })
  return {
    paired: {
      alpha: policy.alpha,
      candidates: ids.flatMap((id) => {
        const summary = compared.per_candidate.get(id)
        return summary === undefined
          ? []
          : [{ leaderboard_model_id: id, statistically_tied_with: summary.statistically_tied_with, rank_band: summary.rank_band }]
      }),
      pairwise
    },
    decision
  }
}

/** Whether the decision changes what the ranking serves: only then is it recorded. */
export const changesServing = (decision: ServingDecision): boolean =>
  (decision.action === "first" || decision.action === "switch") && decision.to_candidate_id !== null

/** What a human serving-history entry is made of besides the decision: its id, time and actor come from the use case. */
export interface HumanServingEntry {
  readonly id: ServingEntryId
  readonly at: DateTime.Utc
  readonly actor: ServingActor
}

/**
 * The `human` serving-history entry of a decision that changes what serves (`first` or `switch`).
 * A `keep` is never recorded: every confirmed verdict decides again, and a history of "kept" after
 * each of them would bury the changes that matter.
 */
export const humanServingEntry = (input: {
  readonly entry: HumanServingEntry
  readonly workspace_id: WorkspaceId
  readonly leaderboard_id: LeaderboardId
  readonly decision: ServingDecision
  readonly policy: ServingPolicy
  readonly comparable: number
}): ServingHistoryEntry => {
  const { decision } = input
  const candidate = (id: string | null) => (id === null ? null : CandidateId.make(id))
  return new ServingHistoryEntry({
    id: input.entry.id,
    workspace_id: input.workspace_id,
    leaderboard_id: input.leaderboard_id,
    at: input.entry.at,
    kind: "human",
    from_candidate_id: candidate(decision.from_candidate_id),
    to_candidate_id: candidate(decision.to_candidate_id),
    actor: input.entry.actor,
    evidence: {
      action: decision.action,
      comparable_cases: input.comparable,
      shared_rows: decision.shared_rows,
      p_value: decision.p_value,
      difference: decision.difference,
      chosen_among_ties: decision.chosen_among_ties,
      policy: input.policy
    },
    reason: decision.reason
  })
}
