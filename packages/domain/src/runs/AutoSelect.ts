import { Effect, Result, Schema } from "effect"
import { InvalidInput, isStorableText } from "../shared/index.ts"
import type { CatalogueModel, EndpointLatency } from "./RouterCatalogue.ts"

/** What a caller asks of auto-select; every field optional. Prices in USD per million tokens, latencies in seconds. */
export interface AutoSelectRequest {
  readonly number_of_models?: number | undefined
  readonly limit_cost?: boolean | undefined
  readonly input_price_per_m_tokens?: number | undefined
  readonly output_price_per_m_tokens?: number | undefined
  readonly limit_latency?: boolean | undefined
  readonly latency_p95_seconds?: number | undefined
  readonly latency_p99_seconds?: number | undefined
  readonly only_open_source?: boolean | undefined
}

export const defaultNumberOfModels = 3
export const minimumNumberOfModels = 2

/** The request as rules: defaults applied, an inactive limit is null, latencies in milliseconds. */
export interface AutoSelectRules {
  readonly count: number
  /** USD per million tokens; a bound left out is null. */
  readonly cost: { readonly input: number | null; readonly output: number | null } | null
  readonly latency: { readonly p95_ms: number | null; readonly p99_ms: number | null } | null
  readonly onlyOpenSource: boolean
}

/** The workspace has no router integration, so the router's catalogue cannot be read for it. */
export class RouterIntegrationMissing extends Schema.TaggedError<RouterIntegrationMissing>()("RouterIntegrationMissing", {
  workspace_id: Schema.String
}) {}

/** Why a catalogue model was not added; each is counted under the first of these it fails, in this order. */
export const rejectionReasons = ["unstorable_text", "already_candidate", "open_source", "cost", "latency", "over_limit"] as const
export type RejectionReason = typeof rejectionReasons[number]
export type RejectedBy = { readonly [K in RejectionReason]: number }

/** A catalogue model that has a price: prices in USD per million tokens. */
export interface PricedModel {
  readonly id: string
  readonly name: string
  readonly input_price_per_m_tokens: number
  readonly output_price_per_m_tokens: number
  readonly open_source: boolean
}

export interface ModelSelection {
  /** Cheapest first, at most `count`. */
  readonly chosen: ReadonlyArray<PricedModel>
  readonly considered: number
  readonly rejected_by: RejectedBy
}

const invalid = (message: string, field: string) => Result.fail(new InvalidInput({ message, path: [field] }))
const isPrice = (n: number | undefined) => n === undefined || (Number.isFinite(n) && n >= 0)
const isLatency = (n: number | undefined) => n === undefined || (Number.isFinite(n) && n > 0)

/** Checks the request and reads it as rules. A limit that is switched on must name at least one bound. */
export const rulesOf = (request: AutoSelectRequest): Result.Result<AutoSelectRules, InvalidInput> => {
  const count = request.number_of_models ?? defaultNumberOfModels
  if (!Number.isSafeInteger(count) || count < minimumNumberOfModels) {
    return invalid(`number_of_models must be an integer of at least ${minimumNumberOfModels}`, "number_of_models")
  }
  for (const field of ["input_price_per_m_tokens", "output_price_per_m_tokens"] as const) {
    if (!isPrice(request[field])) return invalid(`${field} must be a number of at least 0`, field)
  }
  for (const field of ["latency_p95_seconds", "latency_p99_seconds"] as const) {
    if (!isLatency(request[field])) return invalid(`${field} must be a number greater than 0`, field)
  }
  const input = request.input_price_per_m_tokens ?? null
  const output = request.output_price_per_m_tokens ?? null
  if (request.limit_cost === true && input === null && output === null) {
    return invalid("limit_cost needs input_price_per_m_tokens or output_price_per_m_tokens", "limit_cost")
  }
  const p95 = request.latency_p95_seconds ?? null
  const p99 = request.latency_p99_seconds ?? null
  if (request.limit_latency === true && p95 === null && p99 === null) {
    return invalid("limit_latency needs latency_p95_seconds or latency_p99_seconds", "limit_latency")
  }
  return Result.succeed({
    count,
    cost: request.limit_cost === true ? { input, output } : null,
    latency: request.limit_latency === true
      ? { p95_ms: p95 === null ? null : p95 * 1000, p99_ms: p99 === null ? null : p99 * 1000 }
      : null,
    onlyOpenSource: request.only_open_source === true
  })
}

/** USD per token as USD per million tokens, without the binary noise of the product (3e-6 · 1e6 is 3, not 3.0000000000000004). */
export const perMillionTokens = (perToken: number): number => Number((perToken * 1_000_000).toPrecision(12))

/** The sum of both prices, then the id: the order "cheapest first" means. */
export const cheaperFirst = (a: PricedModel, b: PricedModel): number => {
  const cost = (a.input_price_per_m_tokens + a.output_price_per_m_tokens) -
    (b.input_price_per_m_tokens + b.output_price_per_m_tokens)
  return cost !== 0 ? cost : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

/** p95 interpolated between p90 and p99 (5/9 of the way), when both are known. */
export const p95Of = (endpoint: EndpointLatency): number | null =>
  endpoint.p90 === null || endpoint.p99 === null ? null : endpoint.p90 + (endpoint.p99 - endpoint.p90) * 5 / 9

/**
 * Whether a model meets the latency limits: its best endpoint (one that meets every bound) decides.
 * A bound needs the percentile it names, so a model without latency data fails any limit.
 */
export const meetsLatency = (
  endpoints: ReadonlyArray<EndpointLatency>,
  limits: NonNullable<AutoSelectRules["latency"]>
): boolean =>
  endpoints.some((endpoint) => {
    const p95 = p95Of(endpoint)
    return (limits.p95_ms === null || (p95 !== null && p95 <= limits.p95_ms)) &&
      (limits.p99_ms === null || (endpoint.p99 !== null && endpoint.p99 <= limits.p99_ms))
  })

/** The rules that need no more than the catalogue: the models left, cheapest first, and what the others failed. */
export const screenModels = (
  models: ReadonlyArray<CatalogueModel>,
  rules: AutoSelectRules,
  /** Model ids that are already Router candidates of the leaderboard. */
  existing: ReadonlySet<string>
): { readonly eligible: ReadonlyArray<PricedModel>; readonly rejected_by: RejectedBy } => {
  const rejected_by = { unstorable_text: 0, already_candidate: 0, open_source: 0, cost: 0, latency: 0, over_limit: 0 }
  const seen = new Set(existing)
  const eligible: Array<PricedModel> = []
  for (const model of models) {
    // the catalogue is outside data: an entry Postgres could not store is never added, nor compared
    // Stryker disable next-line StringLiteral: equivalent, any stand-in for a missing text is storable
    if (![model.id, model.name ?? "", model.hugging_face_id ?? ""].every(isStorableText)) {
      rejected_by.unstorable_text++
      continue
    }
    // a model listed twice is taken once
    if (seen.has(model.id)) {
      rejected_by.already_candidate++
      continue
    }
    seen.add(model.id)
    const open_source = model.hugging_face_id !== null && model.hugging_face_id.trim() !== ""
    if (rules.onlyOpenSource && !open_source) {
      rejected_by.open_source++
      continue
    }
    // prices are needed to rank and to record on the candidate, so an unpriced model fails cost, and
    // so does one whose price per million tokens is past what a number holds
    const input = model.prompt_price === null ? null : perMillionTokens(model.prompt_price)
    const output = model.completion_price === null ? null : perMillionTokens(model.completion_price)
    if (input === null || output === null || !Number.isFinite(input) || !Number.isFinite(output)) {
      rejected_by.cost++
      continue
    }
    const priced: PricedModel = {
      id: model.id,
      name: model.name !== null && model.name.trim() !== "" ? model.name : model.id,
      input_price_per_m_tokens: input,
      output_price_per_m_tokens: output,
      open_source
    }
    if (
      rules.cost !== null && (
        (rules.cost.input !== null && priced.input_price_per_m_tokens > rules.cost.input) ||
        (rules.cost.output !== null && priced.output_price_per_m_tokens > rules.cost.output)
      )
    ) {
      rejected_by.cost++
      continue
    }
    eligible.push(priced)
  }
  return { eligible: eligible.sort(cheaperFirst), rejected_by }
}

/** Latency lookups at once, at most. */
const latencyConcurrency = 8

/**
 * The cheapest `rules.count` models that pass every rule. Latency is asked (through `latencyOf`) only
 * when limited, cheapest first and no more than the places still open, so a model the selection
 * never reached counts as `over_limit` whether or not it would meet the limit.
 */
export const autoSelect = Effect.fnUntraced(function*<E, R>(
  models: ReadonlyArray<CatalogueModel>,
  rules: AutoSelectRules,
  existing: ReadonlySet<string>,
  latencyOf: (model: PricedModel) => Effect.Effect<ReadonlyArray<EndpointLatency>, E, R>
): Effect.fn.Return<ModelSelection, E, R> {
  const screened = screenModels(models, rules, existing)
  const { eligible } = screened
  const limits = rules.latency
  let chosen: ReadonlyArray<PricedModel>
  let latencyRejected = 0
  let next = 0
  if (limits === null) {
    chosen = eligible.slice(0, rules.count)
    next = chosen.length
  } else {
    const passing: Array<PricedModel> = []
    while (passing.length < rules.count && next < eligible.length) {
      const batch = eligible.slice(next, next + rules.count - passing.length)
      next += batch.length
      // Stryker disable next-line ObjectLiteral: equivalent in result, concurrency only changes how long the lookups take
      const latencies = yield* Effect.forEach(batch, latencyOf, { concurrency: latencyConcurrency })
      batch.forEach((model, i) => meetsLatency(latencies[i]!, limits) ? passing.push(model) : latencyRejected++)
    }
    chosen = passing
  }
  return {
    chosen,
    considered: models.length,
    rejected_by: { ...screened.rejected_by, latency: latencyRejected, over_limit: eligible.length - next }
  }
})
