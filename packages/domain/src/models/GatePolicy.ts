import { Result, Schema } from "effect"
import { InvalidInput, mcnemarExact, pairedDifference } from "../shared/index.ts"

/**
 * `auto_update_model`'s gate: a new version replaces the deployed one only when, on at least
 * `min_rows` shared held-out rows, it is non-inferior (the paired difference's lower bound is above
 * `-margin`) and not significantly worse at level `alpha` (two-sided exact McNemar).
 */
export const GatePolicy = Schema.Struct({
  alpha: Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1, exclusiveMinimum: true, exclusiveMaximum: true })),
  margin: Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1, exclusiveMaximum: true })),
  min_rows: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))
})
export type GatePolicy = typeof GatePolicy.Type

export const defaultGatePolicy: GatePolicy = { alpha: 0.05, margin: 0.02, min_rows: 20 }

/** A PATCH of the policy: what it sends changes, what it leaves out stays; ranges are checked on apply. */
export const GatePolicyPatch = Schema.Struct({
  alpha: Schema.optional(Schema.Number),
  margin: Schema.optional(Schema.Number),
  min_rows: Schema.optional(Schema.Number)
})
export type GatePolicyPatch = typeof GatePolicyPatch.Type

/**
 * `current` with `patch` applied, or InvalidInput naming the first field out of range. `at` prefixes
 * the error's path, for a policy that sits inside a larger request (e.g. `["gate_policy"]`).
 */
export const applyGatePolicyPatch = (
  current: GatePolicy,
  patch: GatePolicyPatch,
  at: ReadonlyArray<string> = []
): Result.Result<GatePolicy, InvalidInput> => {
  const next: GatePolicy = {
    alpha: patch.alpha ?? current.alpha,
    margin: patch.margin ?? current.margin,
    min_rows: patch.min_rows ?? current.min_rows
  }
  const invalid = (field: keyof GatePolicy, rule: string, value: number) =>
    Result.fail(new InvalidInput({ message: `${field} must be ${rule} (got ${value})`, path: [...at, field] }))
  if (!(next.alpha > 0 && next.alpha < 1)) return invalid("alpha", "a number strictly between 0 and 1", next.alpha)
  if (!(next.margin >= 0 && next.margin < 1)) return invalid("margin", "a number from 0 up to, not including, 1", next.margin)
  if (!(Number.isInteger(next.min_rows) && next.min_rows >= 1)) return invalid("min_rows", "a whole number of at least 1", next.min_rows)
  return Result.succeed(next)
}

/** New version minus deployed version: the estimate and its interval. */
export const GateDifference = Schema.Struct({
  estimate: Schema.Number,
  low: Schema.Number,
  high: Schema.Number
})
export type GateDifference = typeof GateDifference.Type

/**
 * The new version against the deployed one on the same held-out rows: `wins` counts rows the new
 * version gets right and the deployed one wrong, `losses` the reverse; `p_value` is the two-sided
 * exact McNemar p.
 */
export interface GateComparison {
  readonly shared_rows: number
  readonly wins: number
  readonly losses: number
  readonly p_value: number | null
  readonly difference: GateDifference | null
}

/**
 * The paired comparison of the new version against the deployed one from their verdicts on the
 * same held-out rows (by row key: true right, false wrong, null no verdict). Only rows where both
 * have a verdict count; `p_value` is the exact McNemar test of wins against losses, `difference`
 * Newcombe's interval for new minus deployed (method 10), null when no row is shared.
 */
export const gateComparison = <K>(
  candidate: ReadonlyMap<K, boolean | null>,
  deployed: ReadonlyMap<K, boolean | null>
): GateComparison => {
  let both_right = 0
  let wins = 0
  let losses = 0
  let both_wrong = 0
  for (const [row, mine] of candidate) {
    const theirs = deployed.get(row)
    if (mine === null || theirs === null || theirs === undefined) continue
    if (mine && theirs) both_right++
    else if (mine) wins++
    else if (theirs) losses++
    else both_wrong++
  }
  return {
    shared_rows: both_right + wins + losses + both_wrong,
    wins,
    losses,
    p_value: mcnemarExact(wins, losses),
    difference: pairedDifference({ both_right, wins, losses, both_wrong })
  }
}

export const GateDecision = Schema.Struct({
  decision: Schema.Literals(["deploy", "keep"]),
  reason: Schema.String,
  shared_rows: Schema.Int,
  wins: Schema.Int,
  losses: Schema.Int,
  p_value: Schema.NullOr(Schema.Number),
  difference: Schema.NullOr(GateDifference)
})
export type GateDecision = typeof GateDecision.Type

/**
 * What a run's gate records: the decision and its paired statistics, the policy it was taken under,
 * and (as the earlier gate did) the deployed version and both held-out scores.
 */
export const GateEvidence = Schema.Struct({
  ...GateDecision.fields,
  policy: GatePolicy,
  deployed_version_id: Schema.NullOr(Schema.String),
  candidate_score: Schema.NullOr(Schema.Number),
  deployed_score: Schema.NullOr(Schema.Number)
})
export type GateEvidence = typeof GateEvidence.Type

const formatP = (p: number | null): string =>
  p === null ? "p unknown" : p < 0.0001 ? "p < 0.0001" : `p = ${Number(p.toPrecision(2))}`
const formatNumber = (x: number): string => String(Number(x.toFixed(3)))
const formatInterval = (d: GateDifference): string =>
  `difference ${formatNumber(d.estimate)}, interval [${formatNumber(d.low)}, ${formatNumber(d.high)}]`

/**
 * Deploy the new version when nothing is deployed, or when on at least `min_rows` shared rows it is
 * not significantly worse (not p < alpha with more losses than wins) and non-inferior (lower bound
 * of new minus deployed above `-margin`); otherwise keep the deployed one.
 */
export const decideGate = (policy: GatePolicy, comparison: GateComparison | null): GateDecision => {
  if (comparison === null) {
    return { decision: "deploy", reason: "no version was deployed", shared_rows: 0, wins: 0, losses: 0, p_value: null, difference: null }
  }
  const { shared_rows, wins, losses, p_value, difference } = comparison
  const outcome = (decision: GateDecision["decision"], reason: string): GateDecision =>
    ({ decision, reason, shared_rows, wins, losses, p_value, difference })
  const keep = (reason: string) => outcome("keep", `kept the deployed version: ${reason}`)
  const rows = `${shared_rows} shared held-out rows`
  if (shared_rows < policy.min_rows) return keep(`only ${rows}, ${policy.min_rows} needed`)
  if (p_value !== null && p_value < policy.alpha && losses > wins) {
    return keep(
      `the new version is significantly worse: wrong on ${losses} rows where the deployed one is right and right on ${wins} where it is wrong, ${formatP(p_value)} ${p_value < 0.0001 ? `(alpha ${policy.alpha})` : `< ${policy.alpha}`} on ${rows}`
    )
  }
  if (difference === null) return keep(`the difference could not be measured on ${rows}`)
  if (!(difference.low > -policy.margin)) {
    return keep(`the new version may be worse by more than the margin: ${formatInterval(difference)}, lower bound not above -${policy.margin}, on ${rows}`)
  }
  return outcome(
    "deploy",
    `deployed the new version: non-inferior (${formatInterval(difference)}, lower bound above -${policy.margin}) and not significantly worse (${formatP(p_value)}) on ${rows}`
  )
}
