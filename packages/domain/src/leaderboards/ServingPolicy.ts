import { Result, Schema } from "effect"
import { InvalidInput } from "../shared/index.ts"

export const SwitchWhen = Schema.Literals(["significantly_better", "non_inferior_and_cheaper"])
export type SwitchWhen = typeof SwitchWhen.Type

/**
 * When a leaderboard's serving candidate is replaced: only on evidence from at least `min_rows`
 * shared scored rows, judged at level `alpha` (Holm-adjusted exact McNemar) or, for
 * `non_inferior_and_cheaper`, by the paired difference's lower bound against `-margin`.
 */
export const ServingPolicy = Schema.Struct({
  alpha: Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1, exclusiveMinimum: true, exclusiveMaximum: true })),
  min_rows: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)),
  switch_when: SwitchWhen,
  margin: Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1, exclusiveMaximum: true }))
})
export type ServingPolicy = typeof ServingPolicy.Type

export const defaultServingPolicy: ServingPolicy = {
  alpha: 0.05,
  min_rows: 30,
  switch_when: "significantly_better",
  margin: 0.02
}

/** A PATCH of the policy: what it sends changes, what it leaves out stays; ranges are checked on apply. */
export const ServingPolicyPatch = Schema.Struct({
  alpha: Schema.optional(Schema.Number),
  min_rows: Schema.optional(Schema.Number),
  switch_when: Schema.optional(SwitchWhen),
  margin: Schema.optional(Schema.Number)
})
export type ServingPolicyPatch = typeof ServingPolicyPatch.Type

/**
 * `current` with `patch` applied, or InvalidInput naming the first field out of range. `at` prefixes
 * the error's path, for a policy that sits inside a larger request (e.g. `["serving_policy"]`).
 */
export const applyServingPolicyPatch = (
  current: ServingPolicy,
  patch: ServingPolicyPatch,
  at: ReadonlyArray<string> = []
): Result.Result<ServingPolicy, InvalidInput> => {
  const next: ServingPolicy = {
    alpha: patch.alpha ?? current.alpha,
    min_rows: patch.min_rows ?? current.min_rows,
    switch_when: patch.switch_when ?? current.switch_when,
    margin: patch.margin ?? current.margin
  }
  const invalid = (field: keyof ServingPolicy, rule: string, value: number) =>
    Result.fail(new InvalidInput({ message: `${field} must be ${rule} (got ${value})`, path: [...at, field] }))
  if (!(next.alpha > 0 && next.alpha < 1)) return invalid("alpha", "a number strictly between 0 and 1", next.alpha)
  if (!(Number.isInteger(next.min_rows) && next.min_rows >= 1)) return invalid("min_rows", "a whole number of at least 1", next.min_rows)
  if (!(next.margin >= 0 && next.margin < 1)) return invalid("margin", "a number from 0 up to, not including, 1", next.margin)
  return Result.succeed(next)
}

/** A paired difference (estimate and interval), always read as the first-named candidate minus the second. */
export const ServingDifference = Schema.Struct({
  estimate: Schema.Number,
  low: Schema.Number,
  high: Schema.Number
})
export type ServingDifference = typeof ServingDifference.Type

/**
 * What a run decided about who serves. `to_candidate_id` serves afterwards (the kept one on `keep`);
 * the statistics compare the challenger with the serving candidate (`difference` is challenger minus
 * serving) or, on `first` chosen among ties, the chosen candidate with the best-scoring one.
 */
export const ServingDecision = Schema.Struct({
  action: Schema.Literals(["first", "switch", "keep", "none"]),
  from_candidate_id: Schema.NullOr(Schema.String),
  to_candidate_id: Schema.NullOr(Schema.String),
  reason: Schema.String,
  shared_rows: Schema.Int,
  /** Holm-adjusted. */
  p_value: Schema.NullOr(Schema.Number),
  difference: Schema.NullOr(ServingDifference),
  chosen_among_ties: Schema.Boolean
})
export type ServingDecision = typeof ServingDecision.Type

export interface ServingCandidate {
  readonly id: string
  readonly name: string
  readonly score: number | null
  readonly cost_per_call: number | null
}

/**
 * Two candidates on the rows both have a verdict on: `wins` counts rows `a` gets right and `b`
 * wrong, `losses` the reverse; `difference` is `a` minus `b`. Either order may be given.
 */
export interface ServingPair {
  readonly a: string
  readonly b: string
  readonly shared_rows: number
  readonly wins: number
  readonly losses: number
  readonly p_adjusted: number | null
  readonly difference: ServingDifference | null
}

export interface ServingInput {
  readonly policy: ServingPolicy
  /** The candidate serving now; null when nothing serves yet. */
  readonly serving: string | null
  /** In ranked order, best first. */
  readonly candidates: ReadonlyArray<ServingCandidate>
  readonly pairs: ReadonlyArray<ServingPair>
  readonly tiedWith: (id: string) => ReadonlyArray<string>
}

interface Comparison {
  readonly shared_rows: number
  readonly wins: number
  readonly losses: number
  readonly p_adjusted: number | null
  readonly difference: ServingDifference | null
}

const noComparison: Comparison = { shared_rows: 0, wins: 0, losses: 0, p_adjusted: null, difference: null }

/** `x` against `y`, whichever order the pair was given in. */
const compare = (pairs: ReadonlyArray<ServingPair>, x: string, y: string): Comparison => {
  for (const pair of pairs) {
    if (pair.a === x && pair.b === y) return pair
    if (pair.a === y && pair.b === x) {
      return {
        shared_rows: pair.shared_rows,
        wins: pair.losses,
        losses: pair.wins,
        p_adjusted: pair.p_adjusted,
        difference: pair.difference === null
          ? null
          : { estimate: -pair.difference.estimate, low: -pair.difference.high, high: -pair.difference.low }
      }
    }
  }
  return noComparison
}

/** The highest score; on equal scores, the earlier in ranked order. */
const bestOf = (candidates: ReadonlyArray<ServingCandidate>): ServingCandidate | undefined => {
  let best: ServingCandidate | undefined
  for (const candidate of candidates) {
    if (candidate.score !== null && (best === undefined || candidate.score > (best.score ?? -Infinity))) best = candidate
  }
  return best
}

const significant = (x: number): string => String(Number(x.toPrecision(2)))

/** `p = 0.31`, two significant digits; `p < 0.0001` below that. */
const formatP = (p: number | null): string =>
  p === null ? "p unknown" : p < 0.0001 ? "p < 0.0001" : `p = ${significant(p)}`

const formatNumber = (x: number): string => String(Number(x.toFixed(3)))
const formatCost = (x: number | null): string => x === null ? "unknown" : `${significant(x)} per call`
const formatInterval = (d: ServingDifference): string =>
  `difference ${formatNumber(d.estimate)}, interval [${formatNumber(d.low)}, ${formatNumber(d.high)}]`
const formatScore = (x: number | null): string => x === null ? "no score" : `score ${formatNumber(x)}`

const decision = (
  fields: Omit<ServingDecision, "shared_rows" | "p_value" | "difference" | "chosen_among_ties">,
  comparison: Comparison,
  chosen_among_ties = false
): ServingDecision => ({
  ...fields,
  shared_rows: comparison.shared_rows,
  p_value: comparison.p_adjusted,
  difference: comparison.difference,
  chosen_among_ties
})

/** Cost known before unknown, then cheaper first, then ranked order. */
const cheaperFirst = (order: ReadonlyArray<ServingCandidate>) => (x: ServingCandidate, y: ServingCandidate): number =>
  x.cost_per_call === null || y.cost_per_call === null
    ? (x.cost_per_call === null ? 1 : 0) - (y.cost_per_call === null ? 1 : 0) || order.indexOf(x) - order.indexOf(y)
    : x.cost_per_call - y.cost_per_call || order.indexOf(x) - order.indexOf(y)

const decideFirst = (input: ServingInput, removed: string | null): ServingDecision => {
  const best = bestOf(input.candidates)
  const note = removed === null ? "" : ` (the serving candidate ${removed} is no longer on the leaderboard)`
  if (best === undefined) {
    return decision(
      { action: "none", from_candidate_id: null, to_candidate_id: null, reason: `nothing serves: no candidate has a score${note}` },
      noComparison
    )
  }
  const tiedIds = new Set(input.tiedWith(best.id))
  const tied = input.candidates.filter((c) => c.id !== best.id && c.score !== null && tiedIds.has(c.id))
  if (tied.length === 0) {
    return decision(
      { action: "first", from_candidate_id: null, to_candidate_id: best.id, reason: `first to serve: ${best.name} has the best ${formatScore(best.score)}${note}` },
      noComparison
    )
  }
  const chosen = [best, ...tied].sort(cheaperFirst(input.candidates))[0] ?? best
  const reason = chosen === best
    ? `first to serve: ${best.name} has the best ${formatScore(best.score)} and is the cheapest (${formatCost(best.cost_per_call)}) of the ${tied.length + 1} candidates statistically tied with it${note}`
    : `first to serve: ${chosen.name} (${formatScore(chosen.score)}, ${formatCost(chosen.cost_per_call)}) is the cheapest of the ${tied.length + 1} candidates statistically tied with the best, ${best.name} (${formatScore(best.score)}, ${formatCost(best.cost_per_call)})${note}`
  return decision(
    { action: "first", from_candidate_id: null, to_candidate_id: chosen.id, reason },
    chosen === best ? noComparison : compare(input.pairs, chosen.id, best.id),
    true
  )
}

/**
 * Who serves after a run. With nothing serving (or the serving candidate gone), the best score
 * serves, the cheapest among those statistically tied with it. Otherwise the top-ranked challenger
 * replaces the serving candidate only on at least `min_rows` shared rows and, by `switch_when`,
 * either a Holm-adjusted p below `alpha` with more wins than losses, or a difference whose lower
 * bound is above `-margin` at a known, lower cost per call. Latency never decides.
 */
export const decideServing = (input: ServingInput): ServingDecision => {
  const { policy } = input
  const serving = input.candidates.find((c) => c.id === input.serving)
  if (serving === undefined) return decideFirst(input, input.serving)
  const keep = (reason: string, comparison: Comparison) =>
    decision({ action: "keep", from_candidate_id: serving.id, to_candidate_id: serving.id, reason: `kept ${serving.name}: ${reason}` }, comparison)
  if (bestOf(input.candidates) === serving) return keep(`it is still the best (${formatScore(serving.score)})`, noComparison)
  const best = bestOf(input.candidates.filter((c) => c.id !== serving.id))
  if (best === undefined) return keep("no other candidate has a score", noComparison)
  const comparison = compare(input.pairs, best.id, serving.id)
  const { shared_rows, wins, losses, p_adjusted, difference } = comparison
  const rows = `${shared_rows} shared ${shared_rows === 1 ? "row" : "rows"}`
  const tooFew = shared_rows < policy.min_rows ? `, ${policy.min_rows} needed` : ""
  const counts = `${best.name} is right on ${wins} ${wins === 1 ? "row" : "rows"} where ${serving.name} is wrong and wrong on ${losses} where ${serving.name} is right`
  const switched = (reason: string) =>
    decision({ action: "switch", from_candidate_id: serving.id, to_candidate_id: best.id, reason: `switched to ${best.name} from ${serving.name}: ${reason}` }, comparison)
  if (policy.switch_when === "significantly_better") {
    if (tooFew !== "" || p_adjusted === null) {
      return keep(`${best.name} is not significantly better, ${formatP(p_adjusted)} on ${rows}${tooFew}`, comparison)
    }
    if (p_adjusted >= policy.alpha) {
      return keep(`${best.name} is not significantly better, ${formatP(p_adjusted)} ≥ ${policy.alpha} on ${rows}`, comparison)
    }
    if (wins <= losses) {
      return keep(`${best.name} is not better: ${counts}, ${formatP(p_adjusted)} on ${rows}`, comparison)
    }
    const below = p_adjusted < 0.0001 ? `(alpha ${policy.alpha})` : `< ${policy.alpha}`
    return switched(`${counts}, ${formatP(p_adjusted)} ${below} on ${rows}`)
  }
  if (tooFew !== "" || difference === null) {
    return keep(`${best.name} is not shown non-inferior: ${difference === null ? "no difference measured" : formatInterval(difference)} on ${rows}${tooFew}`, comparison)
  }
  if (!(difference.low > -policy.margin)) {
    return keep(`${best.name} may be worse by more than the margin: ${formatInterval(difference)}, lower bound not above -${policy.margin}, on ${rows}`, comparison)
  }
  const cost = `${formatCost(best.cost_per_call)} against ${formatCost(serving.cost_per_call)}`
  if (best.cost_per_call === null || serving.cost_per_call === null) {
    return keep(`${best.name} is non-inferior on ${rows} but its cost cannot be compared (${cost})`, comparison)
  }
  if (!(best.cost_per_call < serving.cost_per_call)) {
    return keep(`${best.name} is non-inferior on ${rows} but not cheaper (${cost})`, comparison)
  }
  return switched(`${best.name} is non-inferior (${formatInterval(difference)}, lower bound above -${policy.margin}) and cheaper (${cost}) on ${rows}`)
}
