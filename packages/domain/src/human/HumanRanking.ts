import { addUsd } from "../shared/index.ts"
import type { ResponseStatus, Verdict } from "./HumanEval.ts"

/**
 * The ranking of human evaluation, as a pure function of the cases (two steps, so that SQL can
 * produce the tallies itself later):
 *
 * - One row per candidate given; responses of other candidates are ignored.
 * - `correct` / `total` count the `correct` and `correct` + `incorrect` verdicts of confirmed
 *   cases (abstentions and failures are not answers). `score` = correct / total, and `score`,
 *   its Wilson 95% interval and `rank` are null when total = 0.
 * - Costs and technical errors cover every case, confirmed or not, since a processed but
 *   unreviewed response was still paid for. Costs are over succeeded responses (null costs count
 *   as `cost_missing`); failed calls cost nothing and count only as technical errors.
 * - `common_rows` are the same rows over comparable cases only: confirmed cases in which every
 *   candidate has exactly one response, judged `correct` or `incorrect`. Every candidate is then
 *   scored on the same questions, so they alone name the serving `winner`.
 * - Ranks are competition ranks ("1224"): 1 + the number of rows with a strictly greater score.
 *   Rows are ordered by rank with unranked rows last, then by name, then by id.
 */

export interface RankingCandidate {
  readonly id: string
  readonly name: string
}

export interface RankedResponse {
  readonly candidate_id: string
  readonly status: ResponseStatus
  readonly cost_usd: number | null
  /** The verdict of the case's current review (null when none, or the response failed). */
  readonly verdict: Verdict | null
}

export interface RankedCase {
  readonly confirmed: boolean
  readonly responses: ReadonlyArray<RankedResponse>
}

export interface RankingRow {
  readonly leaderboard_model_id: string
  readonly name: string
  readonly correct: number
  readonly total: number
  readonly score: number | null
  readonly score_low: number | null
  readonly score_high: number | null
  readonly rank: number | null
  readonly average_cost_usd: number | null
  readonly total_cost_usd: number
  readonly cost_samples: number
  readonly cost_missing: number
  readonly technical_errors: number
}

export interface Ranking {
  readonly rows: ReadonlyArray<RankingRow>
  readonly common_rows: ReadonlyArray<RankingRow>
  readonly confirmed: number
  readonly comparable: number
}

/** One candidate's counters over a set of cases: all a row needs. */
export interface Tally {
  readonly correct: number
  readonly total: number
  readonly cost_sum: number
  readonly cost_samples: number
  readonly cost_missing: number
  readonly technical_errors: number
}

/** Tallies by candidate id, over all cases (`rows`) and over comparable cases (`common`). */
export interface Tallies {
  readonly rows: ReadonlyMap<string, Tally>
  readonly common: ReadonlyMap<string, Tally>
  readonly confirmed: number
  readonly comparable: number
}

export const emptyTally: Tally = { correct: 0, total: 0, cost_sum: 0, cost_samples: 0, cost_missing: 0, technical_errors: 0 }

const isJudged = (response: RankedResponse): boolean =>
  response.status === "succeeded" && (response.verdict === "correct" || response.verdict === "incorrect")

const isComparable = (candidates: ReadonlyArray<RankingCandidate>, evalCase: RankedCase): boolean =>
  evalCase.confirmed &&
  candidates.length > 0 &&
  candidates.every(({ id }) => {
    const own = evalCase.responses.filter((response) => response.candidate_id === id)
    return own.length === 1 && isJudged(own[0]!)
  })

/** Adds one response; its verdict counts only when `reviewed` (the case is confirmed). */
const add = (counts: Tally, response: RankedResponse, reviewed: boolean): Tally => {
  if (response.status === "failed") return { ...counts, technical_errors: counts.technical_errors + 1 }
  const judged = reviewed && isJudged(response)
  return {
    correct: counts.correct + (judged && response.verdict === "correct" ? 1 : 0),
    total: counts.total + (judged ? 1 : 0),
    cost_sum: addUsd(counts.cost_sum, response.cost_usd ?? 0),
    cost_samples: counts.cost_samples + (response.cost_usd === null ? 0 : 1),
    cost_missing: counts.cost_missing + (response.cost_usd === null ? 1 : 0),
    technical_errors: counts.technical_errors
  }
}

export const tally = (candidates: ReadonlyArray<RankingCandidate>, cases: ReadonlyArray<RankedCase>): Tallies => {
  const rows = new Map(candidates.map(({ id }) => [id, emptyTally]))
  const common = new Map(rows)
  let confirmed = 0
  let comparable = 0
  for (const evalCase of cases) {
    const inCommon = isComparable(candidates, evalCase)
    if (evalCase.confirmed) confirmed++
    if (inCommon) comparable++
    for (const response of evalCase.responses) {
      const row = rows.get(response.candidate_id)
      if (row === undefined) continue
      rows.set(response.candidate_id, add(row, response, evalCase.confirmed))
      const commonRow = common.get(response.candidate_id)
      if (inCommon && commonRow !== undefined) common.set(response.candidate_id, add(commonRow, response, true))
    }
  }
  return { rows, common, confirmed, comparable }
}

const z = 1.959963984540054

const clamp = (x: number) => Math.min(1, Math.max(0, x))

/** The Wilson score interval at 95%, kept around the score itself despite rounding. */
export const wilson = (correct: number, total: number): { readonly low: number; readonly high: number } | null => {
  if (total <= 0) return null
  const p = correct / total
  const z2 = z * z
  const denominator = 1 + z2 / total
  const center = (p + z2 / (2 * total)) / denominator
  const half = (z * Math.sqrt((p * (1 - p)) / total + z2 / (4 * total * total))) / denominator
  return { low: Math.min(p, clamp(center - half)), high: Math.max(p, clamp(center + half)) }
}

const toRow = ({ id, name }: RankingCandidate, t: Tally): RankingRow => {
  const interval = wilson(t.correct, t.total)
  return {
    leaderboard_model_id: id,
    name,
    correct: t.correct,
    total: t.total,
    score: t.total > 0 ? t.correct / t.total : null,
    score_low: interval?.low ?? null,
    score_high: interval?.high ?? null,
    rank: null,
    average_cost_usd: t.cost_samples > 0 ? t.cost_sum / t.cost_samples : null,
    total_cost_usd: t.cost_sum,
    cost_samples: t.cost_samples,
    cost_missing: t.cost_missing,
    technical_errors: t.technical_errors
  }
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

const byRank = (a: RankingRow, b: RankingRow) =>
  (a.rank ?? Number.MAX_SAFE_INTEGER) - (b.rank ?? Number.MAX_SAFE_INTEGER) ||
  compareText(a.name, b.name) ||
  compareText(a.leaderboard_model_id, b.leaderboard_model_id)

const ranked = (rows: ReadonlyArray<RankingRow>): ReadonlyArray<RankingRow> =>
  rows
    .map((row) => {
      const score = row.score
      return score === null ? row : { ...row, rank: 1 + rows.filter((other) => other.score !== null && other.score > score).length }
    })
    .toSorted(byRank)

export const fromTallies = (candidates: ReadonlyArray<RankingCandidate>, tallies: Tallies): Ranking => ({
  rows: ranked(candidates.map((candidate) => toRow(candidate, tallies.rows.get(candidate.id) ?? emptyTally))),
  common_rows: ranked(candidates.map((candidate) => toRow(candidate, tallies.common.get(candidate.id) ?? emptyTally))),
  confirmed: tallies.confirmed,
  comparable: tallies.comparable
})

export const rank = (candidates: ReadonlyArray<RankingCandidate>, cases: ReadonlyArray<RankedCase>): Ranking =>
  fromTallies(candidates, tally(candidates, cases))

/** The serving winner: the one candidate ranked first on the common cases; none on a tie. */
export const winner = (ranking: Ranking): string | null => {
  const first = ranking.common_rows.filter((row) => row.rank === 1)
  return first.length === 1 ? first[0]!.leaderboard_model_id : null
}
