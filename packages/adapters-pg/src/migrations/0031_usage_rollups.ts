import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Dashboards read rollups kept at write time, not the traces and logs themselves: over a million
 * traces the exact aggregate (count, sum, percentile_cont per day) took about a second, and a
 * rollup read stays at tens of milliseconds however many calls it covers (BENCHMARKS.md,
 * "Dashboards (issue 31)").
 *
 * - One row per leaderboard (model), bucket (`hour`: a whole UTC hour; `day`: a UTC day) and
 *   latency bin: calls, errors and spend (exact decimal). A bucket's totals are sums over its bins;
 *   its latency percentiles are read from the bins' counts. Both sizes are kept, so a chart reads
 *   one row per bin it shows, never an hour per day.
 * - A latency bin is `floor(ln(1 + ms) / ln(1.02))`: each bin is 2% wide, so a percentile read
 *   inside its bin is within 2% of the exact one (and within 0.02 ms below 1 ms). -1: no latency.
 * - Kept by statement-level triggers over each INSERT's new rows, so every writer (group commit,
 *   an operator's COPY) counts, once per row actually inserted (rows ON CONFLICT DO NOTHING skips
 *   are not in the transition table). Rows are upserted in key order, so concurrent writers lock
 *   them in the same order and cannot deadlock. Of traces, only source `inference` counts.
 * - Existing rows are counted in: the triggers are made first, so writers wait for this
 *   transaction, then the rollups are filled from what is committed.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE FUNCTION usage_latency_bin(ms double precision) RETURNS smallint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT CASE WHEN ms IS NULL OR ms = 'NaN' THEN -1
        ELSE least(floor(ln(1 + greatest(ms, 0)) / ln(1.02)), 32767)::smallint END
    $$`
  yield* sql`
    CREATE FUNCTION usage_latency_bin_start(bin integer) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT power(1.02::double precision, bin) - 1 $$`

  for (const [table, key, references] of [
    ["trace_usage", "leaderboard_id", ""],
    ["model_usage", "model_id", "REFERENCES models (id) ON DELETE CASCADE"]
  ] as const) {
    yield* sql`
      CREATE TABLE ${sql(table)} (
        ${sql(key)} uuid NOT NULL ${sql.literal(references)},
        bucket text NOT NULL CHECK (bucket IN ('hour', 'day')),
        start timestamptz NOT NULL,
        latency_bin smallint NOT NULL,
        calls bigint NOT NULL,
        errors bigint NOT NULL,
        spend_usd numeric NOT NULL,
        PRIMARY KEY (${sql(key)}, bucket, start, latency_bin)
      )`
  }

  // the rows of each bucket size a set of new rows adds to; `FROM inserted` in a trigger, the table to fill
  const traceRows = (from: string) => sql`
    SELECT leaderboard_id, b.bucket, date_bin(b.size, created_at, timestamptz '2000-01-01 00:00:00+00'),
      usage_latency_bin(latency_ms), count(*), count(*) FILTER (WHERE status = 'error'), coalesce(sum(cost_usd::numeric), 0)
    FROM ${sql.literal(from)} CROSS JOIN (VALUES ('hour', interval '1 hour'), ('day', interval '24 hours')) AS b(bucket, size)
    WHERE source = 'inference'
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`
  // metadata is what the service wrote (status, latency_ms, cost_usd); anything else there counts as absent
  const logRows = (from: string) => sql`
    SELECT model_id, b.bucket, date_bin(b.size, created_at, timestamptz '2000-01-01 00:00:00+00'),
      usage_latency_bin(CASE WHEN jsonb_typeof(metadata -> 'latency_ms') = 'number' THEN (metadata ->> 'latency_ms')::double precision END),
      count(*), count(*) FILTER (WHERE metadata ->> 'status' = 'error'),
      coalesce(sum(CASE WHEN jsonb_typeof(metadata -> 'cost_usd') = 'number' THEN (metadata ->> 'cost_usd')::numeric END), 0)
    FROM ${sql.literal(from)} CROSS JOIN (VALUES ('hour', interval '1 hour'), ('day', interval '24 hours')) AS b(bucket, size)
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`
  const addUp = sql.literal(`DO UPDATE SET calls = u.calls + excluded.calls, errors = u.errors + excluded.errors,
    spend_usd = u.spend_usd + excluded.spend_usd`)

  yield* sql`
    CREATE FUNCTION trace_usage_add() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO trace_usage AS u (leaderboard_id, bucket, start, latency_bin, calls, errors, spend_usd)
      ${traceRows("inserted")}
      ON CONFLICT (leaderboard_id, bucket, start, latency_bin) ${addUp};
      RETURN NULL;
    END
    $$`
  yield* sql`
    CREATE TRIGGER traces_usage AFTER INSERT ON traces REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION trace_usage_add()`
  yield* sql`
    CREATE FUNCTION model_usage_add() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO model_usage AS u (model_id, bucket, start, latency_bin, calls, errors, spend_usd)
      ${logRows("inserted")}
      ON CONFLICT (model_id, bucket, start, latency_bin) ${addUp};
      RETURN NULL;
    END
    $$`
  yield* sql`
    CREATE TRIGGER model_inference_logs_usage AFTER INSERT ON model_inference_logs REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION model_usage_add()`

  yield* sql`INSERT INTO trace_usage (leaderboard_id, bucket, start, latency_bin, calls, errors, spend_usd) ${traceRows("traces")}`
  yield* sql`INSERT INTO model_usage (model_id, bucket, start, latency_bin, calls, errors, spend_usd) ${logRows("model_inference_logs")}`
})
