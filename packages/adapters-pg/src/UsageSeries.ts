import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { type StatsRange, type UsagePoint } from "@podium/domain/inference"
import { Timestamp, toDate } from "./Rows.ts"

const PointRow = Schema.Struct({
  start: Timestamp,
  calls: Schema.Number,
  errors: Schema.Number,
  spend_usd: Schema.String,
  latency_p50_ms: Schema.NullOr(Schema.Number),
  latency_p95_ms: Schema.NullOr(Schema.Number)
})
const decodePoints = Schema.decodeUnknownEffect(Schema.Array(PointRow))

/** The rollups a series is read from (migration 0031): the table, and the column naming whose it is. */
export type Rollup =
  | { readonly table: "trace_usage"; readonly key: "leaderboard_id" }
  | { readonly table: "model_usage"; readonly key: "model_id" }

const steps = { hour: "1 hour", day: "24 hours" } as const

/**
 * One statement per series, over the rollup of the range's bucket size (not the calls): the
 * buckets' latency bins, joined to every bucket start of `generate_series` so an empty bucket is a
 * row of zeros. Calls, errors and spend are sums over a bucket's bins. p50 and p95 interpolate, as
 * percentile_cont does, between the calls ranked k and k+1 around p·(n−1), each read in its
 * latency bin at its place among the bin's calls spread evenly across it: each within its bin's
 * 2%, so the percentile is within 2% of percentile_cont's.
 */
export const usageSeries = (
  sql: SqlClient.SqlClient,
  rollup: Rollup,
  id: string,
  range: StatsRange
): Effect.Effect<ReadonlyArray<UsagePoint>> => {
  const step = steps[range.bucket]
  const from = toDate(range.from)
  const last = toDate(range.last)
  return sql`
    WITH bins AS (
      SELECT start, latency_bin, calls, errors, spend_usd AS spend
      FROM ${sql(rollup.table)}
      WHERE ${sql(rollup.key)} = ${id} AND bucket = ${range.bucket} AND start >= ${from} AND start <= ${last}
    ), totals AS (
      SELECT start, sum(calls) AS calls, sum(errors) AS errors, sum(spend) AS spend FROM bins GROUP BY start
    ), timed AS (
      SELECT start, latency_bin, calls::float8 AS calls,
        (sum(calls) OVER (PARTITION BY start ORDER BY latency_bin) - calls)::float8 AS below,
        (sum(calls) OVER (PARTITION BY start))::float8 AS total
      FROM bins WHERE latency_bin >= 0
    ), ranks AS (
      -- percentile_cont's rank p·(n−1) lies between the calls ranked k and k+1 (f of the way): the bins holding either
      SELECT start, p, calls, below, floor(p * (total - 1)) AS k, p * (total - 1) - floor(p * (total - 1)) AS f,
        usage_latency_bin_start(latency_bin) AS low, usage_latency_bin_start(latency_bin + 1) AS high
      FROM timed CROSS JOIN (VALUES (0.5::float8), (0.95::float8)) AS q(p)
      WHERE floor(p * (total - 1)) + 1 >= below AND floor(p * (total - 1)) < below + calls
    ), quantiles AS (
      SELECT start, p, sum(
        CASE WHEN k >= below THEN (1 - f) * (low + (high - low) * (k - below + 0.5) / calls) ELSE 0 END +
        CASE WHEN k + 1 < below + calls THEN f * (low + (high - low) * (k + 1 - below + 0.5) / calls) ELSE 0 END
      ) AS ms
      FROM ranks GROUP BY start, p
    )
    SELECT s.start, coalesce(t.calls, 0)::float8 AS calls, coalesce(t.errors, 0)::float8 AS errors,
      trim_scale(coalesce(t.spend, 0))::text AS spend_usd,
      round(p50.ms::numeric, 2)::float8 AS latency_p50_ms, round(p95.ms::numeric, 2)::float8 AS latency_p95_ms
    FROM generate_series(${from}::timestamptz, ${last}::timestamptz, ${step}::interval) AS s(start)
    LEFT JOIN totals t ON t.start = s.start
    LEFT JOIN quantiles p50 ON p50.start = s.start AND p50.p = 0.5
    LEFT JOIN quantiles p95 ON p95.start = s.start AND p95.p = 0.95
    ORDER BY s.start`.pipe(Effect.flatMap(decodePoints), Effect.orDie)
}
