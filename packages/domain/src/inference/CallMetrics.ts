/**
 * Metrics of upstream calls, in Effect's metric registry (served as Prometheus text at `/metrics`):
 * calls by candidate platform, trace source and outcome, their latency, the tokens and cost they
 * reported, and budget refusals. Labels are bounded (platform, source and outcome are closed
 * sets); a call's update reads series made on the first call with its labels (no label object or
 * string per call), in the registry of the context the service was built in.
 */
import { Context, Effect, Metric } from "effect"
import type { TraceSource, TraceStatus } from "./Trace.ts"

/** Latency buckets of upstream calls, in seconds: a cached answer to a long generation. */
const latencyBoundaries = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300]

interface OutcomeSeries {
  readonly calls: Metric.Counter<number>
  readonly latency: Metric.Histogram<number>
}

/**
 * METRICS_PER_LEADERBOARD: tokens and cost also by leaderboard (`leaderboard_id`), for operators who
 * ask for it; a label per leaderboard grows with them, so off by default.
 */
export const MetricsPerLeaderboard = Context.Reference<boolean>("@podium/domain/inference/MetricsPerLeaderboard", {
  defaultValue: () => false
})

/** Tokens and cost of one leaderboard (METRICS_PER_LEADERBOARD). */
interface SpendSeries {
  readonly inputTokens: Metric.Counter<number>
  readonly outputTokens: Metric.Counter<number>
  readonly cost: Metric.Counter<number>
}

interface SourceSeries {
  readonly outcomes: Map<TraceStatus, OutcomeSeries>
  readonly inputTokens: Metric.Counter<number>
  readonly outputTokens: Metric.Counter<number>
  readonly cost: Metric.Counter<number>
}

/** What a call's trace says, as the metrics read it. */
export interface CallMeasured {
  readonly status: TraceStatus
  readonly latency_ms: number
  readonly usage: Readonly<Record<string, number>> | null
  readonly cost_usd: number | null
}

export interface CallMetrics {
  /** Counts one call to a candidate of `platform` (`unknown` when the caller does not say) made for `source`. */
  readonly call: (platform: string | undefined, source: TraceSource, measured: CallMeasured, leaderboardId: string) => void
  /** Counts a call refused for its token's budget. */
  readonly budgetRefused: () => void
}

const counter = (name: string, description: string, attributes: Record<string, string>) =>
  Metric.counter(name, { description, attributes, incremental: true })

/** The call metrics of `context`'s registry; tokens and cost also by leaderboard when `context` says (MetricsPerLeaderboard). */
export const callMetrics = (context: Context.Context<never>): CallMetrics => {
  const byPlatform = new Map<string, Map<TraceSource, SourceSeries>>()
  const perLeaderboard = Context.get(context, MetricsPerLeaderboard)
  const byLeaderboard = new Map<string, SpendSeries>()
  const leaderboardSeries = (leaderboard_id: string): SpendSeries => {
    let series = byLeaderboard.get(leaderboard_id)
    if (series === undefined) {
      byLeaderboard.set(leaderboard_id, series = {
        inputTokens: counter("podium_leaderboard_tokens_total", "Tokens upstream calls reported, by leaderboard and kind (METRICS_PER_LEADERBOARD)", {
          leaderboard_id,
          kind: "input"
        }),
        outputTokens: counter("podium_leaderboard_tokens_total", "Tokens upstream calls reported, by leaderboard and kind (METRICS_PER_LEADERBOARD)", {
          leaderboard_id,
          kind: "output"
        }),
        cost: counter("podium_leaderboard_cost_usd_total", "What upstream calls cost, in US dollars, by leaderboard (METRICS_PER_LEADERBOARD)", { leaderboard_id })
      })
    }
    return series
  }
  /** Adds a call's reported tokens and cost to `series`. */
  const spend = (series: SpendSeries, measured: CallMeasured) => {
    const usage = measured.usage
    if (usage !== null) {
      const input = usage["prompt_tokens"]
      const output = usage["completion_tokens"]
      if (typeof input === "number" && input >= 0) series.inputTokens.updateUnsafe(input, context)
      if (typeof output === "number" && output >= 0) series.outputTokens.updateUnsafe(output, context)
    }
    if (measured.cost_usd !== null && measured.cost_usd >= 0) series.cost.updateUnsafe(measured.cost_usd, context)
  }
  const refusals = counter("podium_budget_refusals_total", "Calls refused because their API token's budget was spent", {})
  refusals.updateUnsafe(0, context) // shown from the start, at 0

  const sourceSeries = (platform: string, source: TraceSource): SourceSeries => {
    let sources = byPlatform.get(platform)
    if (sources === undefined) byPlatform.set(platform, sources = new Map())
    let series = sources.get(source)
    if (series === undefined) {
      const attributes = { platform, source }
      sources.set(source, series = {
        outcomes: new Map(),
        inputTokens: counter("podium_upstream_tokens_total", "Tokens upstream calls reported, by platform, source and kind (input, output)", {
          ...attributes,
          kind: "input"
        }),
        outputTokens: counter("podium_upstream_tokens_total", "Tokens upstream calls reported, by platform, source and kind (input, output)", {
          ...attributes,
          kind: "output"
        }),
        cost: counter("podium_upstream_cost_usd_total", "What upstream calls cost (as reported, else priced), in US dollars, by platform and source", attributes)
      })
    }
    return series
  }

  const outcomeSeries = (platform: string, source: SourceSeries, sourceName: TraceSource, status: TraceStatus): OutcomeSeries => {
    let series = source.outcomes.get(status)
    if (series === undefined) {
      const attributes = { platform, source: sourceName, outcome: status }
      source.outcomes.set(status, series = {
        calls: counter("podium_upstream_calls_total", "Calls to candidates and targets, by platform, source and outcome (success, error, cancelled)", attributes),
        latency: Metric.histogram("podium_upstream_call_duration_seconds", {
          description: "Latency of upstream calls (a stream's whole length), by platform, source and outcome, in seconds",
          boundaries: latencyBoundaries,
          attributes
        })
      })
    }
    return series
  }

  return {
    call: (platform = "unknown", source, measured, leaderboardId) => {
      const series = sourceSeries(platform, source)
      const outcome = outcomeSeries(platform, series, source, measured.status)
      outcome.calls.updateUnsafe(1, context)
      outcome.latency.updateUnsafe(measured.latency_ms / 1000, context)
      spend(series, measured)
      if (perLeaderboard) spend(leaderboardSeries(leaderboardId), measured)
    },
    budgetRefused: () => refusals.updateUnsafe(1, context)
  }
}

/** The call metrics of the current context's registry. */
export const makeCallMetrics: Effect.Effect<CallMetrics> = Effect.map(Effect.context<never>(), callMetrics)
