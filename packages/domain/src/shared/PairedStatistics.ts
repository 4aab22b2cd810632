/**
 * Paired comparison of candidates scored right/wrong on the same rows: the exact McNemar test,
 * Newcombe's interval for the difference of paired proportions, Holm's adjustment, and the
 * LMArena-style rank bands built from them. Pure functions of counts; no randomness, no clock.
 *
 * Counts must be non-negative integers and alpha lie in (0, 1]; anything else is a bug in the
 * caller and throws a RangeError.
 */

/** The four cells of a paired 2x2 table of candidates A and B. */
export interface PairedTable {
  /** Rows both got right. */
  readonly both_right: number
  /** Rows A got right and B wrong. */
  readonly wins: number
  /** Rows A got wrong and B right. */
  readonly losses: number
  /** Rows both got wrong. */
  readonly both_wrong: number
}

/** pA − pB with its 95% interval; low <= estimate <= high, all within [−1, 1]. */
export interface PairedDifference {
  readonly estimate: number
  readonly low: number
  readonly high: number
}

export interface PairedComparison {
  readonly a: string
  readonly b: string
  /** Rows where both a and b have a verdict: wins + losses + ties. */
  readonly shared_rows: number
  /** Shared rows a got right and b wrong. */
  readonly wins: number
  /** Shared rows a got wrong and b right. */
  readonly losses: number
  /** Shared rows both got right or both got wrong. */
  readonly ties: number
  /** Exact McNemar test of wins against losses. */
  readonly p_value: number
  /** Holm-adjusted over every pair of the comparison. */
  readonly p_adjusted: number
  /** pa − pb over the shared rows; null when there are none. */
  readonly difference: PairedDifference | null
}

export interface RankBand {
  /** 1 + the number of candidates significantly better. */
  readonly best: number
  /** The number of candidates − the number significantly worse. */
  readonly worst: number
}

export interface CandidatePairedSummary {
  /** Rows with a verdict (true or false). */
  readonly scored_rows: number
  /** Rows with a null verdict (error, judge failure, unscorable). */
  readonly excluded_rows: number
  /** The other candidates whose pair with this one has p_adjusted >= alpha, in input order. */
  readonly statistically_tied_with: ReadonlyArray<string>
  readonly rank_band: RankBand
}

export interface PairedComparisonResult {
  /** Every unordered pair once, a before b in candidate order. */
  readonly pairwise: ReadonlyArray<PairedComparison>
  readonly per_candidate: ReadonlyMap<string, CandidatePairedSummary>
}

const requireCount = (name: string, value: number) => {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative integer, got ${value}`)
  }
}

const SCALE_EXPONENT = 500
const SCALE_DOWN = 2 ** -SCALE_EXPONENT
const SCALE_LIMIT = 2 ** SCALE_EXPONENT

/** value · 2^exponent without overflow or premature underflow for any exponent. */
const timesPowerOfTwo = (value: number, exponent: number) => {
  let result = value
  let remaining = exponent
  while (remaining < -1000) {
    result *= 2 ** -1000
    remaining += 1000
  }
  while (remaining > 1000) {
    result *= 2 ** 1000
    remaining -= 1000
  }
  return result * 2 ** remaining
}

/**
 * P(X <= m) for X ~ Binomial(n, 1/2), m <= n/2. The terms start at exactly 2^−n and grow by the
 * ratio (n − j)/(j + 1); both the term and the running sum carry a shared power-of-two exponent
 * so neither underflows for large n. Each term's relative error is at most ~2·m ulps, so the sum
 * is within ~1e-13 relative for n of a few thousand.
 */
const lowerTailHalf = (m: number, n: number) => {
  let term = 1
  let sum = 1
  let exponent = -n
  for (let j = 0; j < m; j++) {
    term *= (n - j) / (j + 1)
    sum += term
    if (term > SCALE_LIMIT) {
      term *= SCALE_DOWN
      sum *= SCALE_DOWN
      exponent += SCALE_EXPONENT
    }
  }
  return { sum, exponent }
}

/**
 * The exact two-sided binomial test of k successes in n trials against p = 1/2, equal to SciPy's
 * `binomtest(k, n, 0.5).pvalue`. SciPy sums the probabilities of all outcomes no more likely
 * than k (with a relative tolerance of 1e-7); at p = 1/2 the distribution is symmetric and
 * adjacent probabilities differ by far more than 1e-7 for any n below millions, so that sum is
 * 2·P(X <= min(k, n − k)), capped at 1. n = 0 gives 1.
 */
export const binomialTestTwoSided = (k: number, n: number): number => {
  requireCount("n", n)
  requireCount("k", k)
  if (k > n) throw new RangeError(`k must be at most n, got k = ${k}, n = ${n}`)
  if (2 * k === n || n === 0) return 1
  const { sum, exponent } = lowerTailHalf(Math.min(k, n - k), n)
  return Math.min(1, timesPowerOfTwo(sum, exponent + 1))
}

/** The exact (conditional) McNemar test: the discordant pairs against a fair coin. */
export const mcnemarExact = (wins: number, losses: number): number => binomialTestTwoSided(wins, wins + losses)

/** Φ⁻¹(0.975), as `scipy.stats.norm.ppf(0.975)` prints it. */
const Z_95 = 1.959963984540054

const wilson = (successes: number, n: number) => {
  const z2 = Z_95 * Z_95
  const p = successes / n
  const denominator = 2 * (n + z2)
  const centre = (2 * successes + z2) / denominator
  const half = (Z_95 * Math.sqrt(z2 + 4 * successes * (1 - p))) / denominator
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) }
}

/**
 * pA − pB = (wins − losses)/n with the 95% interval of Newcombe (1998, Stat Med 17:2635–2650),
 * method 10: Wilson score intervals [l1, u1] for pA and [l2, u2] for pB combined by "square and
 * add" with the correlation φ between the two margins,
 *
 *   low  = D − sqrt((pA − l1)² − 2φ(pA − l1)(u2 − pB) + (u2 − pB)²)
 *   high = D + sqrt((pB − l2)² − 2φ(pB − l2)(u1 − pA) + (u1 − pA)²)
 *
 * with the paper's corrected φ: with B = both_right·both_wrong − wins·losses, φ = (B − n/2)/√M
 * when B > n/2, 0 when 0 <= B <= n/2, B/√M when B < 0, where M is the product of the four
 * margins, and φ = 0 when any margin is 0. This reproduces the method 10 limits published for
 * Newcombe's own example and for Fagerland, Lydersen & Laake (2014) (see the test). null when n = 0.
 */
export const pairedDifference = (table: PairedTable): PairedDifference | null => {
  const { both_right, wins, losses, both_wrong } = table
  requireCount("both_right", both_right)
  requireCount("wins", wins)
  requireCount("losses", losses)
  requireCount("both_wrong", both_wrong)
  const n = both_right + wins + losses + both_wrong
  if (n === 0) return null
  const rightA = both_right + wins
  const rightB = both_right + losses
  const pA = rightA / n
  const pB = rightB / n
  const estimate = (wins - losses) / n
  const a = wilson(rightA, n)
  const b = wilson(rightB, n)
  const margins = rightA * (n - rightA) * rightB * (n - rightB)
  const cross = both_right * both_wrong - wins * losses
  const corrected = cross > n / 2 ? cross - n / 2 : cross < 0 ? cross : 0
  const phi = margins === 0 ? 0 : corrected / Math.sqrt(margins)
  const spread = (x: number, y: number) => Math.sqrt(Math.max(0, x * x - 2 * phi * x * y + y * y))
  const low = estimate - spread(pA - a.low, b.high - pB)
  const high = estimate + spread(pB - b.low, a.high - pA)
  return { estimate, low: Math.max(-1, low), high: Math.min(1, high) }
}

/**
 * Holm–Bonferroni adjusted p-values in input order: sorted ascending, the i-th smallest (from 0)
 * becomes max over j <= i of (m − j)·p(j), capped at 1, so the adjusted values keep the order of
 * the raw ones. Same as statsmodels' `multipletests(p, method="holm")[1]`.
 */
export const holm = (pValues: ReadonlyArray<number>): ReadonlyArray<number> => {
  const m = pValues.length
  const order = pValues.map((p, index) => ({ p, index })).sort((x, y) => x.p - y.p)
  const adjusted = new Array<number>(m).fill(1)
  let running = 0
  order.forEach(({ p, index }, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * p))
    adjusted[index] = running
  })
  return adjusted
}

/** The same comparison seen from b: wins and losses swap, the difference changes sign. */
export const mirror = (pair: PairedComparison): PairedComparison => ({
  ...pair,
  a: pair.b,
  b: pair.a,
  wins: pair.losses,
  losses: pair.wins,
  // 0 − x rather than −x, so that a zero stays +0 as a direct computation gives it.
  difference: pair.difference === null
    ? null
    : { estimate: 0 - pair.difference.estimate, low: 0 - pair.difference.high, high: 0 - pair.difference.low }
})

const NO_VERDICTS: ReadonlyMap<string, boolean | null> = new Map()

const pairTable = (first: ReadonlyMap<string, boolean | null>, second: ReadonlyMap<string, boolean | null>) => {
  let both_right = 0
  let wins = 0
  let losses = 0
  let both_wrong = 0
  for (const [row, x] of first) {
    const y = second.get(row)
    if (x === null || y === null || y === undefined) continue
    if (x && y) both_right++
    else if (x) wins++
    else if (y) losses++
    else both_wrong++
  }
  return { both_right, wins, losses, both_wrong }
}

/**
 * Compares every pair of candidates on the rows both have a verdict for (true right, false
 * wrong; null, or a missing row, means no verdict and leaves the row out of that pair). Each
 * pair gets the exact McNemar p-value, Holm-adjusted over all pairs, and Newcombe's interval.
 * A candidate is significantly better than another when the pair's p_adjusted < alpha and it
 * has more wins than losses; statistically tied when p_adjusted >= alpha. Rank bands follow
 * LMArena: best = 1 + #significantly better, worst = #candidates − #significantly worse, so
 * best <= worst. Repeated ids count once; ids without verdicts have no shared rows.
 */
export const comparePaired = (
  candidateIds: ReadonlyArray<string>,
  verdicts: ReadonlyMap<string, ReadonlyMap<string, boolean | null>>,
  alpha: number
): PairedComparisonResult => {
  if (!(alpha > 0 && alpha <= 1)) throw new RangeError(`alpha must lie in (0, 1], got ${alpha}`)
  const ids = [...new Set(candidateIds)]
  const verdictsOf = (id: string) => verdicts.get(id) ?? NO_VERDICTS

  const raw = ids.flatMap((a, i) =>
    ids.slice(i + 1).map((b) => {
      const table = pairTable(verdictsOf(a), verdictsOf(b))
      const ties = table.both_right + table.both_wrong
      return {
        a,
        b,
        shared_rows: table.wins + table.losses + ties,
        wins: table.wins,
        losses: table.losses,
        ties,
        p_value: mcnemarExact(table.wins, table.losses),
        difference: pairedDifference(table)
      }
    })
  )
  const adjusted = holm(raw.map((pair) => pair.p_value))
  const pairwise: ReadonlyArray<PairedComparison> = raw.map((pair, index) => ({
    ...pair,
    p_adjusted: adjusted[index] ?? 1
  }))

  const seen = new Map<string, Array<PairedComparison>>(ids.map((id) => [id, []]))
  for (const pair of pairwise) {
    seen.get(pair.a)?.push(pair)
    seen.get(pair.b)?.push(mirror(pair))
  }

  const per_candidate = new Map<string, CandidatePairedSummary>()
  for (const id of ids) {
    const own = [...verdictsOf(id).values()]
    const fromHere = seen.get(id) ?? []
    const significant = fromHere.filter((pair) => pair.p_adjusted < alpha)
    const better = significant.filter((pair) => pair.losses > pair.wins).length
    const worse = significant.filter((pair) => pair.wins > pair.losses).length
    per_candidate.set(id, {
      scored_rows: own.filter((verdict) => verdict !== null).length,
      excluded_rows: own.filter((verdict) => verdict === null).length,
      statistically_tied_with: ids.filter((other) =>
        fromHere.some((pair) => pair.b === other && pair.p_adjusted >= alpha)
      ),
      rank_band: { best: 1 + better, worst: ids.length - worse }
    })
  }
  return { pairwise, per_candidate }
}
