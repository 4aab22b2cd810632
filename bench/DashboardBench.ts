import { PgClient } from "@effect/sql-pg"
import { DateTime, Effect, Layer, ManagedRuntime, Redacted, Result } from "effect"
import { SqlClient } from "effect/sql"
import pg from "pg"
import { type Rollup, usageSeries } from "@podium/adapters-pg/UsageSeries"
import { type StatsBucket, statsRange, type StatsWindow } from "@podium/domain/inference"
import { benchSession, startBenchPodium } from "./Benchmark.ts"
import { json, type SelfRunningBenchmark } from "./InferenceBench.ts"

/** Calls of the leaderboard (traces) and of the model (inference logs), spread evenly over 30 days. */
const calls = 1_000_000
/** Timed rounds per chart (after `warmups` untimed ones); the figure is their median. */
const rounds = 15
const warmups = 3
/** Issue 31's target for one chart's query. */
const targetMs = 300

const charts: ReadonlyArray<readonly [StatsWindow, StatsBucket]> = [["24h", "hour"], ["7d", "day"], ["7d", "hour"], ["30d", "day"]]

const median = (values: ReadonlyArray<number>) => values.slice().sort((a, b) => a - b)[values.length >> 1]!

const timed = async (run: () => Promise<unknown>): Promise<number> => {
  for (let i = 0; i < warmups; i++) await run()
  const times: Array<number> = []
  for (let i = 0; i < rounds; i++) {
    const started = performance.now()
    await run()
    times.push(performance.now() - started)
  }
  return median(times)
}

/**
 * Time-ordered (UUIDv7-shaped) ids as Podium's own, so rows go to the table in about id order;
 * `g` one of `calls` spread evenly over the 30 days before now, oldest first.
 */
const spread = (n: number) => ({
  id: `(lpad(to_hex(floor(extract(epoch FROM now()) * 1000)::bigint - 2592000000 + (g::bigint * 2592000000 / ${n})), 12, '0') || '7' ||
        substr(md5(g::text), 1, 3) || '8' || substr(md5(g::text), 4, 15))::uuid`,
  at: `now() - interval '30 days' + (g::bigint * 2592000000 / ${n}) * interval '1 millisecond'`
})
/** A skewed latency (most calls 40–150 ms, a tail to about 800 ms), 2% errors, 0.5% left mid-stream, sub-cent costs. */
const latency = "round((40 * exp(3 * ((g::bigint * 7919) % 10007) / 10007.0) + ((g::bigint * 104729) % 1009) / 100.0)::numeric, 1)::float8"
const status = "CASE WHEN g % 50 = 0 THEN 'error' WHEN g % 200 = 1 THEN 'cancelled' ELSE 'success' END"
const cost = "(20 + g % 97) / 1e6"

const writeTraces = (client: pg.Client, workspaceId: string, leaderboardId: string, n: number, source = "inference") => {
  const { at, id } = spread(n)
  return client.query(
    `INSERT INTO traces (id, workspace_id, leaderboard_id, source, input, messages, output, status, error, latency_ms, usage,
       cost_usd, created_at)
     SELECT ${id}, $1, $2, $3, 'Where is order ' || g || '?',
       jsonb_build_array(jsonb_build_object('role', 'user', 'content', 'Where is order ' || g || '?')),
       'It left the warehouse today.', ${status}, CASE WHEN g % 50 = 0 THEN 'upstream 503' END, ${latency},
       jsonb_build_object('prompt_tokens', 40 + g % 30, 'completion_tokens', 12, 'total_tokens', 52 + g % 30), ${cost}, ${at}
     FROM generate_series(1, ${n}) AS g`,
    [workspaceId, leaderboardId, source]
  )
}

const writeLogs = (client: pg.Client, workspaceId: string, modelId: string, n: number) => {
  const { at, id } = spread(n)
  return client.query(
    `INSERT INTO model_inference_logs (id, model_id, workspace_id, version_id, "timestamp", input_message, output_messages,
       traces, metadata, created_at)
     SELECT ${id}, $1, $2, $3::uuid, ${at}, jsonb_build_object('role', 'user', 'content', 'Where is order ' || g || '?'),
       '{"choices": [{"message": {"role": "assistant", "content": "It left the warehouse today."}}]}', '{}',
       jsonb_build_object('status', ${status}, 'version_id', $3::text, 'trainer', 'openai', 'latency_ms', ${latency},
         'usage', jsonb_build_object('total_tokens', 52), 'cost_usd', ${cost}, 'trace_id', NULL), ${at}
     FROM generate_series(1, ${n}) AS g`,
    [modelId, workspaceId, "0190f000-0000-7000-8000-000000000031"]
  )
}

/** What the rollups replace: the exact aggregate over the traces themselves (30 days by the day), for the record. */
const exactSeries = `
  SELECT s.start, count(t.id) AS calls, count(t.id) FILTER (WHERE t.status = 'error') AS errors,
    coalesce(sum(t.cost_usd::numeric), 0) AS spend,
    percentile_cont(0.5) WITHIN GROUP (ORDER BY t.latency_ms) AS p50, percentile_cont(0.95) WITHIN GROUP (ORDER BY t.latency_ms) AS p95
  FROM generate_series($2::timestamptz, $3::timestamptz, interval '24 hours') AS s(start)
  LEFT JOIN traces t ON t.leaderboard_id = $1 AND t.source = 'inference' AND t.created_at >= s.start AND t.created_at < s.start + interval '24 hours'
  GROUP BY s.start ORDER BY s.start`

/** One batch as the trace writer sends it: 1,000 rows as one JSON parameter. */
const writerBatch = (leaderboardId: string, workspaceId: string) =>
  JSON.stringify(Array.from({ length: 1000 }, (_, i) => ({
    id: crypto.randomUUID(), workspace_id: workspaceId, leaderboard_id: leaderboardId, source: "inference",
    messages: [{ role: "user", content: `q${i}` }], output: "a", status: "success", latency_ms: 50 + i, cost_usd: 0.00002,
    created_at: new Date().toISOString()
  })))
const writerInsert = `INSERT INTO traces (id, workspace_id, leaderboard_id, source, messages, output, status, latency_ms, cost_usd, created_at)
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS t(id uuid, workspace_id uuid, leaderboard_id uuid, source text, messages jsonb,
    output text, status text, latency_ms double precision, cost_usd double precision, created_at timestamptz)`

export const DashboardBench: SelfRunningBenchmark = {
  name: "dashboards",
  description: `dashboard charts (24h/7d/30d) over ${calls.toLocaleString("en-US")} traces and as many inference logs, ` +
    "through HTTP and as the adapter's one SQL statement",
  scenarios: async () => {
    throw new Error("the dashboards benchmark runs itself (DashboardBench.run)")
  },
  run: async (databases) => {
    const databaseUrl = await databases.create()
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    const server = await startBenchPodium(databaseUrl)
    const sql = ManagedRuntime.make(PgClient.layer({ url: Redacted.make(databaseUrl) }).pipe(Layer.orDie))
    const notes: Array<string> = []
    const say = (line: string) => {
      process.stderr.write(`  dashboards: ${line}\n`)
    }
    try {
      const jwt = await benchSession("bench-dashboards")
      const { secret } = await json(server, "POST", "/api/tokens", jwt, { name: "dashboards", scopes: ["leaderboards:read", "models:read"] }, 201)
      const { leaderboard } = await json(server, "POST", "/api/leaderboards", jwt, { name: "busy", dataset_type: "PUSH" }, 201)
      const { leaderboard: quiet } = await json(server, "POST", "/api/leaderboards", jwt, { name: "quiet", dataset_type: "PUSH" }, 201)
      const { model } = await json(server, "POST", "/api/models", jwt, { name: "busy model" }, 201)
      const { model: other } = await json(server, "POST", "/api/models", jwt, { name: "other model" }, 201)
      const workspace = leaderboard.business_id as string

      let started = performance.now()
      await writeTraces(client, workspace, leaderboard.id, calls)
      const traceSeconds = (performance.now() - started) / 1000
      say(`${calls} traces written in ${traceSeconds.toFixed(1)} s (one INSERT ... SELECT, rollups by its trigger)`)
      // noise: the leaderboard's runs, another leaderboard, other workspaces' leaderboards
      await writeTraces(client, workspace, leaderboard.id, 100_000, "run")
      await writeTraces(client, workspace, quiet.id, 100_000)
      for (let i = 0; i < 10; i++) await writeTraces(client, crypto.randomUUID(), crypto.randomUUID(), 20_000)
      started = performance.now()
      await writeLogs(client, workspace, model.id, calls)
      const logSeconds = (performance.now() - started) / 1000
      say(`${calls} inference logs written in ${logSeconds.toFixed(1)} s`)
      await writeLogs(client, workspace, other.id, 100_000)
      await client.query("VACUUM ANALYZE traces, model_inference_logs, trace_usage, model_usage")
      const rollupRows = (await client.query(
        `SELECT (SELECT count(*) FROM trace_usage WHERE leaderboard_id = $1)::int AS traces,
                (SELECT count(*) FROM model_usage WHERE model_id = $2)::int AS logs`, [leaderboard.id, model.id])).rows[0]
      notes.push(
        `dashboards: ${calls.toLocaleString("en-US")} traces of one leaderboard over 30 days (plus 300,000 of runs and other ` +
        `leaderboards), written in ${traceSeconds.toFixed(1)} s; ${calls.toLocaleString("en-US")} inference logs of one model ` +
        `(plus 100,000 of another) in ${logSeconds.toFixed(1)} s; rollup rows: ${rollupRows.traces} for the leaderboard, ` +
        `${rollupRows.logs} for the model`,
        `  median of ${rounds} (after ${warmups} warm-ups), ms; target < ${targetMs} ms per chart`,
        "  chart            leaderboard HTTP   leaderboard SQL   model HTTP   model SQL"
      )

      const headers = { authorization: `Bearer ${secret}` }
      const get = async (path: string) => {
        const response = await fetch(`${server.url}${path}`, { headers })
        const body = await response.text()
        if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${body}`)
        return JSON.parse(body) as { buckets: ReadonlyArray<{ calls: number; latency_p50_ms: number | null; latency_p95_ms: number | null }> }
      }
      const statement = (rollup: Rollup, id: string, window: StatsWindow, bucket: StatsBucket) => () =>
        sql.runPromise(Effect.gen(function*() {
          const range = Result.getOrThrow(statsRange(window, bucket, yield* DateTime.now))
          return yield* usageSeries(yield* SqlClient.SqlClient, rollup, id, range)
        }))
      let slowest = 0
      for (const [window, bucket] of charts) {
        const query = `?window=${window}&bucket=${bucket}`
        const figures = [
          await timed(() => get(`/api/leaderboards/${leaderboard.id}/stats${query}`)),
          await timed(statement({ table: "trace_usage", key: "leaderboard_id" }, leaderboard.id, window, bucket)),
          await timed(() => get(`/api/models/${model.id}/stats${query}`)),
          await timed(statement({ table: "model_usage", key: "model_id" }, model.id, window, bucket))
        ]
        slowest = Math.max(slowest, ...figures)
        notes.push(`  ${`${window} by ${bucket}`.padEnd(16)} ${figures.map((f, i) => f.toFixed(1).padStart([18, 17, 12, 11][i]!)).join(" ")}`)
        say(`${window} by ${bucket}: ${figures.map((f) => f.toFixed(1)).join(" / ")} ms`)
      }
      notes.push(`  slowest chart: ${slowest.toFixed(1)} ms (target < ${targetMs} ms: ${slowest < targetMs ? "met" : "NOT met"})`)

      // what the rollups replace, and how far their percentiles are from the exact ones
      const range = Result.getOrThrow(statsRange("30d", "day", DateTime.nowUnsafe()))
      const exactParams = [leaderboard.id, DateTime.toDateUtc(range.from), DateTime.toDateUtc(range.last)]
      const exactMs = await (async () => {
        const times: Array<number> = []
        for (let i = 0; i < 3; i++) {
          const t = performance.now()
          await client.query(exactSeries, exactParams)
          times.push(performance.now() - t)
        }
        return median(times)
      })()
      const exact = (await client.query(exactSeries, exactParams)).rows as Array<{ calls: string; p50: number | null; p95: number | null }>
      const served = (await get(`/api/leaderboards/${leaderboard.id}/stats?window=30d&bucket=day`)).buckets
      let worst = 0
      served.forEach((b, i) => {
        const e = exact[i]!
        if (Number(e.calls) !== b.calls) throw new Error(`bucket ${i}: ${b.calls} calls served, ${e.calls} counted`)
        for (const [got, want] of [[b.latency_p50_ms, e.p50], [b.latency_p95_ms, e.p95]] as const) {
          if (got !== null && want !== null) worst = Math.max(worst, Math.abs(got - want) / want)
        }
      })
      notes.push(
        `  the same 30-day chart as one exact aggregate over the traces (count, numeric sum, percentile_cont per day): ` +
        `${exactMs.toFixed(0)} ms (median of 3); the rollup's p50/p95 are at most ${(worst * 100).toFixed(2)}% from it`
      )

      // what keeping the rollup costs a write: a trace writer's batch of 1,000 rows, with the trigger and without, in turns
      const withTrigger: Array<number> = []
      const withoutTrigger: Array<number> = []
      const writeBatch = async (times: Array<number>) => {
        const batch = writerBatch(quiet.id, workspace)
        const t = performance.now()
        await client.query(writerInsert, [batch])
        times.push(performance.now() - t)
      }
      for (let i = 0; i < 20; i++) {
        await writeBatch(withTrigger)
        await client.query("ALTER TABLE traces DISABLE TRIGGER traces_usage")
        await writeBatch(withoutTrigger)
        await client.query("ALTER TABLE traces ENABLE TRIGGER traces_usage")
      }
      notes.push(
        `  a trace writer's batch of 1,000 rows: ${median(withTrigger).toFixed(1)} ms with the rollup's trigger, ` +
        `${median(withoutTrigger).toFixed(1)} ms without (median of 20, in turns)`
      )
      return { results: [], notes }
    } finally {
      await sql.dispose()
      await server.stop()
      await client.end()
    }
  }
}
