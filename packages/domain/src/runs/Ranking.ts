/**
 * How a run's candidates are ranked: by share of correct answers, with a Wilson interval so a
 * reader can see when a lead is within noise, and a deterministic winner among equal scores.
 */

/** z for a two-sided 95% interval. */
const z95 = 1.959963984540054

/**
 * The Wilson score 95% interval for `correct` out of `total`, or null with no answers. Wilson rather
 * than the normal approximation because it stays inside [0, 1] and is not zero-width at 0% or 100%,
 * which small runs hit often. The interval always holds the observed share, rounding included.
 */
export const wilson = (correct: number, total: number): { readonly low: number; readonly high: number } | null => {
  if (total <= 0) return null
  const p = correct / total
  const z2 = z95 * z95
  const denominator = 1 + z2 / total
  const centre = (p + z2 / (2 * total)) / denominator
  const margin = (z95 * Math.sqrt(p * (1 - p) / total + z2 / (4 * total * total))) / denominator
  return { low: Math.max(0, Math.min(p, centre - margin)), high: Math.min(1, Math.max(p, centre + margin)) }
}

/**
 * The nearest-rank percentile (`p` in (0, 100]) of the values, or null for none: always one of the
 * values, never an interpolation, so a p50 latency is a latency that was observed.
 */
export const percentile = (values: ReadonlyArray<number>, p: number): number | null => {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  const index = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1
  return sorted[index]!
}

/** What a run counted for one candidate. */
export interface Tally {
  readonly leaderboard_model_id: string
  readonly correct: number
  readonly total: number
  readonly total_cost_usd: number | null
  readonly latency_ms_p50: number | null
}

export type Ranked<A extends Tally> = A & {
  readonly score: number | null
  readonly score_low: number | null
  readonly score_high: number | null
  readonly rank: number
}

/** Ascending, an unknown (null) after every known value. */
const nullsLast = (a: number | null, b: number | null) =>
  a === null ? (b === null ? 0 : 1) : b === null ? -1 : a - b

/**
 * The candidates with their scores and competition ranks ("1224"): a candidate's rank is one plus
 * the number of candidates with a strictly higher score, so equal scores share a rank. Candidates
 * without answers have no score and share the last rank, after every scored one. The order is by
 * rank, then cheaper, then faster (p50), an unknown cost or latency after a known one, then input
 * order; so the first candidate is the winner when it has a score.
 */
export const rank = <A extends Tally>(tallies: ReadonlyArray<A>): ReadonlyArray<Ranked<A>> => {
  const scored = tallies.map((tally, index) => {
    const interval = wilson(tally.correct, tally.total)
    return {
      index,
      tally,
      score: tally.total > 0 ? tally.correct / tally.total : null,
      score_low: interval?.low ?? null,
      score_high: interval?.high ?? null
    }
  })
  const scores = scored.flatMap((entry) => (entry.score === null ? [] : [entry.score]))
  const rankOf = (score: number | null) =>
    1 + (score === null ? scores.length : scores.filter((other) => other > score).length)
  return scored
    .map((entry) => ({ ...entry, rank: rankOf(entry.score) }))
    .sort((a, b) =>
      a.rank - b.rank ||
      nullsLast(a.tally.total_cost_usd, b.tally.total_cost_usd) ||
      nullsLast(a.tally.latency_ms_p50, b.tally.latency_ms_p50) ||
      // Stryker disable next-line ArithmeticOperator: equivalent on V8 (as `+`): its stable sort only asks whether the later entry goes first
      a.index - b.index
    )
    .map(({ rank, score, score_high, score_low, tally }) => ({ ...tally, score, score_low, score_high, rank }))
}

/**
 * The run's winner: rank 1, ties broken by lower total cost, then lower p50 latency (the order
 * `rank` returns). No winner when nobody has a score.
 */
export const winnerOf = (ranked: ReadonlyArray<Ranked<Tally>>): string | null => {
  const first = ranked[0]
  return first !== undefined && first.score !== null ? first.leaderboard_model_id : null
}
