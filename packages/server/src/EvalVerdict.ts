import type { ServingDecision } from "@podium/domain/leaderboards"
import type { CandidateResult, PairwiseResult } from "@podium/domain/runs"

/** A candidate as `podium eval` sees it: the leaderboard's id and name. */
export interface EvalCandidate {
  readonly id: string
  readonly name: string
}

/**
 * The candidate a `--candidate` names: its id, else its name (a name two candidates share is
 * ambiguous). A string describing the problem when none or several match.
 */
export const resolveCandidate = (
  candidates: ReadonlyArray<EvalCandidate>,
  given: string
): EvalCandidate | string => {
  const byId = candidates.find((c) => c.id === given)
  if (byId !== undefined) return byId
  const byName = candidates.filter((c) => c.name === given)
  if (byName.length === 1) return byName[0]!
  if (byName.length > 1) return `--candidate ${given} names ${byName.length} candidates: give its id (${byName.map((c) => c.id).join(", ")})`
  return `--candidate ${given} is neither the id nor the name of a candidate of this leaderboard (${
    candidates.map((c) => c.name).join(", ") || "it has none"
  })`
}

/**
 * The candidate a run weighs challengers against: the one serving before the run (the decision's
 * `from`), else the one the decision makes serve (`first`); none when the run decided nothing.
 */
export const servingCandidateOf = (decision: ServingDecision | null): string | null =>
  decision === null || decision.action === "none" ? null : decision.from_candidate_id ?? decision.to_candidate_id

/** One named candidate against the serving one, read from the run's pairwise comparison. */
export interface CandidateVerdict {
  readonly candidate_id: string
  readonly name: string
  readonly serving_candidate_id: string | null
  /** Rows the named candidate got right and the serving one wrong (`losses` the reverse), on their shared rows. */
  readonly wins: number | null
  readonly losses: number | null
  readonly shared_rows: number | null
  /** Holm-adjusted exact McNemar p of the pair. */
  readonly p_adjusted: number | null
  /** `p_adjusted` < alpha and more losses than wins. */
  readonly significantly_worse: boolean
  readonly note: string
}

export interface EvalVerdict {
  readonly alpha: number
  readonly serving_candidate_id: string | null
  readonly candidates: ReadonlyArray<CandidateVerdict>
  /** 1 when a named candidate is significantly worse than the serving one, else 0. */
  readonly exit_code: 0 | 1
}

/**
 * Whether each named candidate is significantly worse than the serving one: its pair's Holm-adjusted
 * p below `alpha` (the leaderboard's serving policy) and more rows lost than won. A candidate that
 * serves, or has no pair with the serving one (nothing serves, it was not asked), is not.
 */
export const evalVerdict = (
  run: {
    readonly results: ReadonlyArray<CandidateResult>
    readonly pairwise: ReadonlyArray<PairwiseResult> | null
    readonly serving_decision: ServingDecision | null
  },
  named: ReadonlyArray<EvalCandidate>,
  alpha: number
): EvalVerdict => {
  const serving = servingCandidateOf(run.serving_decision)
  const nameOf = (id: string) =>
    run.results.find((r) => r.leaderboard_model_id === id)?.name ?? named.find((c) => c.id === id)?.name ?? id
  const candidates = named.map((candidate): CandidateVerdict => {
    const none = (note: string): CandidateVerdict => ({
      candidate_id: candidate.id,
      name: candidate.name,
      serving_candidate_id: serving,
      wins: null,
      losses: null,
      shared_rows: null,
      p_adjusted: null,
      significantly_worse: false,
      note
    })
    if (serving === null) return none("nothing serves to compare it with")
    if (serving === candidate.id) return none("it is the serving candidate")
    const pair = (run.pairwise ?? []).find((p) =>
      (p.a === candidate.id && p.b === serving) || (p.b === candidate.id && p.a === serving)
    )
    if (pair === undefined) return none(`the run has no comparison of it with the serving ${nameOf(serving)}`)
    const [wins, losses] = pair.a === candidate.id ? [pair.wins, pair.losses] : [pair.losses, pair.wins]
    const significantly_worse = pair.p_adjusted < alpha && losses > wins
    const against = `against the serving ${nameOf(serving)}: ${wins} won, ${losses} lost of ${pair.shared_rows} shared rows, ` +
      `Holm ${formatP(pair.p_adjusted)}`
    return {
      candidate_id: candidate.id,
      name: candidate.name,
      serving_candidate_id: serving,
      wins,
      losses,
      shared_rows: pair.shared_rows,
      p_adjusted: pair.p_adjusted,
      significantly_worse,
      note: significantly_worse
        ? `significantly worse ${against}, below alpha ${alpha}`
        : `not significantly worse ${against}${pair.p_adjusted < alpha ? ", more won than lost" : `, not below alpha ${alpha}`}`
    }
  })
  return {
    alpha,
    serving_candidate_id: serving,
    candidates,
    exit_code: candidates.some((c) => c.significantly_worse) ? 1 : 0
  }
}

/** A p-value in a line of text: `p = ` four significant digits, `p < 0.0001` below that. */
export const formatP = (p: number) => p < 0.0001 ? "p < 0.0001" : `p = ${Number(p.toPrecision(4))}`

const fixed = (x: number | null) => x === null ? "–" : x.toFixed(3)

/** The ranking as text: rank, rank band, name, score with its interval, and the candidates it is tied with. */
export const rankingTable = (results: ReadonlyArray<CandidateResult>, serving: string | null): string => {
  const nameOf = (id: string) => results.find((r) => r.leaderboard_model_id === id)?.name ?? id
  const rows = results.map((r) => [
    String(r.rank),
    r.rank_band === undefined ? "" : r.rank_band.best === r.rank_band.worst ? String(r.rank_band.best) : `${r.rank_band.best}–${r.rank_band.worst}`,
    `${r.name}${r.leaderboard_model_id === serving ? " (serving)" : ""}`,
    fixed(r.score),
    r.score_low === null || r.score_high === null ? "–" : `${fixed(r.score_low)}–${fixed(r.score_high)}`,
    `${r.correct}/${r.total}${r.errors > 0 ? ` (${r.errors} errors)` : ""}`,
    (r.statistically_tied_with ?? []).length === 0 ? "" : `≈ ${(r.statistically_tied_with ?? []).map(nameOf).join(", ")}`
  ])
  const header = ["rank", "band", "candidate", "score", "95% interval", "correct", "tied with"]
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  return [header, ...rows].map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n")
}
