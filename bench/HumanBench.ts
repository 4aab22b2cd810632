import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { type SqlClient, Statement } from "effect/sql"
import { Worker } from "node:worker_threads"
import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { HumanCaseRepositoryPg } from "@podium/adapters-pg/human/HumanCaseRepositoryPg"
import { LeaderboardRepositoryPg } from "@podium/adapters-pg/leaderboards/LeaderboardRepositoryPg"
import { ServingHistoryPg } from "@podium/adapters-pg/leaderboards/ServingHistoryPg"
import { basePromptOf, configurationOf, HumanCaseRepository } from "@podium/domain/human"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { type Scenario, type ScenarioResult, type Settings, settle, time, benchSession, startBenchPodium, type Podium } from "./Benchmark.ts"
import type { SelfRunningBenchmark } from "./InferenceBench.ts"
import { expectSuccess, memory, type Target } from "./Load.ts"
import { SpanCounter } from "./SpanCounter.ts"

/** The issue's size: 10,000 cases × 8 candidates, and its target, p95 under 50 ms. */
const caseCount = 10_000
const candidateCount = 8
const targetP95Ms = 50
/** 100 connections would only add queueing to a request this heavy; the target is about 1 and 10. */
const levels = [1, 10]
const basePrompt = "Answer briefly, citing the policy."
const env = { ALLOW_PRIVATE_NETWORK_TARGETS: "true" }

const withSql = <A>(databaseUrl: string, use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>): Promise<A> =>
  Effect.runPromise(
    PgClient.makeClient({ url: Redacted.make(databaseUrl) }).pipe(
      Effect.flatMap(use),
      Effect.scoped,
      Effect.provide(Reactivity.layer)
    )
  )

const json = async (podium: Podium, method: string, path: string, token: string, body: unknown, status: number) => {
  const response = await fetch(`${podium.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  if (response.status !== status) throw new Error(`${method} ${path} answered ${response.status}: ${text}`)
  return JSON.parse(text) as Record<string, any>
}

interface Seeded {
  readonly leaderboardId: LeaderboardId
  readonly jwt: string
  readonly configuration: string
  readonly candidateIds: ReadonlyArray<string>
  /** Confirmed cases of the current configuration, counted in SQL: what `ranking.confirmed` must say. */
  readonly confirmed: number
  readonly humanCasesMb: number
  readonly humanResponsesMb: number
}

/**
 * The leaderboard and its candidates through the API; the cases straight in SQL, in a few
 * statements: a temporary table decides every response (status, verdict, cost) and each case's
 * review state, and the cases and responses are copied from it, so the review JSON and the
 * responses' verdicts agree as the service would have written them.
 */
const prepare = async (podium: Podium, databaseUrl: string): Promise<Seeded> => {
  const jwt = await benchSession("bench-human")
  const leaderboardId = (await json(podium, "POST", "/api/leaderboards", jwt, {
    name: "human bench",
    eval_type: "human",
    dataset_type: "PUSH",
    system_prompt: basePrompt
  }, 201)).leaderboard.id as LeaderboardId
  for (let i = 1; i <= candidateCount; i++) {
    await json(podium, "POST", `/api/leaderboards/${leaderboardId}/models`, jwt, {
      name: `candidate-${i}`,
      platform: "Custom",
      url: `http://127.0.0.1:9/candidate-${i}/v1`,
      auth_type: "none"
    }, 201)
  }
  // The configuration as the service computes it, from the leaderboard as read back.
  const read = await json(podium, "GET", `/api/leaderboards/${leaderboardId}`, jwt, undefined, 200)
  const candidates = read.models as Array<Parameters<typeof configurationOf>[1][number] & { name: string }>
  const configuration = configurationOf(basePromptOf(read.challenge), candidates)
  // About 10% of the cases were made before the base prompt changed.
  const older = configurationOf(basePromptOf({ system_prompt: "Answer briefly." }), candidates)

  process.stderr.write(`  human: seeding ${caseCount} cases and ${caseCount * candidateCount} responses\n`)
  const started = performance.now()
  const seeded = await withSql(databaseUrl, (sql) =>
    Effect.gen(function*() {
      // MATERIALIZED: each random value is drawn once per case (c) and once per response (r).
      yield* sql`
        CREATE TEMP TABLE seed AS
        WITH c AS MATERIALIZED (
          SELECT n, gen_random_uuid() AS case_id, random() < 0.1 AS old, random() AS state,
            now() - (${caseCount} - n) * interval '1 minute' - interval '1 hour' AS created_at
          FROM generate_series(1, ${caseCount}) n
        ),
        r AS MATERIALIZED (
          SELECT c.*, k, gen_random_uuid() AS response_id, random() < 0.03 AS failed,
            random() AS v, random() AS w, random() AS x, random() AS y
          FROM c CROSS JOIN generate_series(1, ${candidateCount}) k
        )
        SELECT n, case_id, old, created_at, k, response_id, review_state,
          (${candidates.map((c) => c.id)}::uuid[])[k] AS candidate_id,
          (${candidates.map((c) => c.name)}::text[])[k] AS candidate_name,
          CASE WHEN failed THEN 'failed' ELSE 'succeeded' END AS status,
          CASE
            WHEN failed OR review_state = 'none' OR (review_state = 'draft' AND y < 0.5) THEN NULL
            WHEN v < 0.55 THEN 'correct' WHEN v < 0.9 THEN 'incorrect' ELSE 'abstain'
          END AS verdict,
          CASE WHEN failed OR w < 0.1 THEN NULL ELSE round((0.0002 + w * 0.004)::numeric, 6)::float8 END AS cost_usd,
          (200 + x * 1200)::int AS output_chars
        FROM (
          SELECT r.*,
            CASE WHEN state < 0.7 THEN 'confirmed' WHEN state < 0.8 THEN 'draft' ELSE 'none' END AS review_state
          FROM r
        ) r`
      yield* sql`INSERT INTO human_client_ids (workspace_id, id, kind)
                 SELECT DISTINCT l.workspace_id, s.case_id, 'case' FROM seed s, leaderboards l WHERE l.id = ${leaderboardId}`
      yield* sql`
        INSERT INTO human_cases (id, leaderboard_id, workspace_id, input, context, prompt_override, prompt, attachments,
          configuration, creation_key, revision, stage, claim_id, claimed_at, slots, generated_at, review_state, review,
          revealed_at, created_at, updated_at)
        SELECT s.case_id, l.id, l.workspace_id,
          'Case ' || s.n || ': ' || repeat('Within how many days can order ' || s.n || ' be refunded? ', 6), '', NULL,
          CASE WHEN s.old THEN 'Answer briefly.' ELSE ${basePrompt} END, '[]'::jsonb,
          CASE WHEN s.old THEN ${older} ELSE ${configuration} END, md5('bench-creation/' || s.n),
          CASE s.review_state WHEN 'none' THEN 3 WHEN 'draft' THEN 4 ELSE 5 END, 'generated', 'completed',
          s.created_at + interval '1 second', s.slots, s.created_at + interval '20 seconds', s.review_state,
          CASE s.review_state
            WHEN 'none' THEN '{"_tag":"Unreviewed"}'::jsonb
            ELSE jsonb_build_object('_tag', CASE s.review_state WHEN 'draft' THEN 'DraftReview' ELSE 'Confirmed' END,
              'verdicts', s.verdicts, 'reference', 'Thirty days from delivery.', 'notes', '',
              CASE s.review_state WHEN 'draft' THEN 'saved_at' ELSE 'confirmed_at' END, s.created_at + interval '50 seconds')
          END,
          CASE WHEN s.review_state = 'confirmed' THEN s.created_at + interval '50 seconds' END,
          s.created_at, s.created_at + interval '50 seconds'
        FROM (
          SELECT n, case_id, old, review_state, min(created_at) AS created_at,
            jsonb_agg(jsonb_build_object('response_id', response_id, 'candidate_id', candidate_id, 'label', chr(64 + k),
              'candidate_name', candidate_name, 'platform', 'Custom', 'model_name', NULL) ORDER BY k) AS slots,
            COALESCE(jsonb_object_agg(response_id, verdict) FILTER (WHERE verdict IS NOT NULL), '{}') AS verdicts
          FROM seed GROUP BY n, case_id, old, review_state
        ) s, leaderboards l
        WHERE l.id = ${leaderboardId}`
      yield* sql`
        INSERT INTO human_responses (id, workspace_id, case_id, candidate_id, label, status, output, error, latency_ms, usage,
          cost_usd, trace_id, verdict, created_at)
        SELECT response_id, (SELECT workspace_id FROM leaderboards WHERE id = ${leaderboardId}), case_id, candidate_id,
          chr(64 + k), status,
          CASE WHEN status = 'succeeded' THEN left(repeat('Refunds are accepted within 30 days of delivery. ', 30), output_chars) END,
          CASE WHEN status = 'failed' THEN 'The provider answered 503' END,
          150 + output_chars, CASE WHEN status = 'succeeded' THEN
            jsonb_build_object('prompt_tokens', 120, 'completion_tokens', output_chars / 4, 'total_tokens', 120 + output_chars / 4)
          END,
          cost_usd, gen_random_uuid(), verdict, created_at + interval '20 seconds'
        FROM seed`
      // The ranking counters the server would have moved case by case (HumanRanking.tally's rules, at once).
      yield* sql`
        WITH r AS (
          SELECT c.leaderboard_id, c.configuration_hash, c.review_state = 'confirmed' AS confirmed, r.case_id,
            r.candidate_id, r.status, r.cost_usd, r.verdict
          FROM human_responses r JOIN human_cases c ON c.workspace_id = r.workspace_id AND c.id = r.case_id
          WHERE c.leaderboard_id = ${leaderboardId}
        ),
        k AS (
          SELECT case_id FROM r WHERE confirmed GROUP BY case_id
          HAVING count(*) FILTER (WHERE status = 'succeeded' AND verdict IN ('correct', 'incorrect')) = ${candidateCount}
        )
        INSERT INTO human_tallies (leaderboard_id, configuration_hash, candidate_id, common, correct, total, cost_sum,
          cost_samples, cost_missing, technical_errors)
        SELECT leaderboard_id, configuration_hash, candidate_id, common,
          count(*) FILTER (WHERE confirmed AND verdict = 'correct'),
          count(*) FILTER (WHERE confirmed AND verdict IN ('correct', 'incorrect')),
          COALESCE(sum(cost_usd) FILTER (WHERE status = 'succeeded'), 0),
          count(*) FILTER (WHERE status = 'succeeded' AND cost_usd IS NOT NULL),
          count(*) FILTER (WHERE status = 'succeeded' AND cost_usd IS NULL),
          count(*) FILTER (WHERE status = 'failed')
        FROM (SELECT r.*, false AS common FROM r UNION ALL SELECT r.*, true FROM r JOIN k USING (case_id)) x
        GROUP BY leaderboard_id, configuration_hash, candidate_id, common`
      yield* sql`
        INSERT INTO human_cohorts (leaderboard_id, configuration_hash, cases, confirmed, comparable)
        SELECT c.leaderboard_id, c.configuration_hash, count(*), count(*) FILTER (WHERE c.review_state = 'confirmed'),
          count(*) FILTER (WHERE c.review_state = 'confirmed' AND (
            SELECT count(*) FROM human_responses r
            WHERE r.workspace_id = c.workspace_id AND r.case_id = c.id AND r.status = 'succeeded'
              AND r.verdict IN ('correct', 'incorrect')
          ) = ${candidateCount})
        FROM human_cases c WHERE c.leaderboard_id = ${leaderboardId}
        GROUP BY c.leaderboard_id, c.configuration_hash`
      // What a live database would have had time to do (autovacuum vacuums and analyzes after inserts).
      yield* sql`VACUUM (ANALYZE) human_client_ids, human_cases, human_responses`
      const [counted] = yield* sql<{ confirmed: number; cases_mb: number; responses_mb: number }>`
        SELECT (SELECT count(*)::int FROM human_cases
                WHERE leaderboard_id = ${leaderboardId} AND configuration = ${configuration}
                  AND review_state = 'confirmed') AS confirmed,
          pg_total_relation_size('human_cases') / 1048576.0 AS cases_mb,
          pg_total_relation_size('human_responses') / 1048576.0 AS responses_mb`
      return counted!
    }))
  process.stderr.write(`  human: seeded and vacuumed in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
  return {
    leaderboardId,
    jwt,
    configuration,
    candidateIds: candidates.map((c) => c.id),
    confirmed: seeded.confirmed,
    humanCasesMb: Number(seeded.cases_mb),
    humanResponsesMb: Number(seeded.responses_mb)
  }
}

const summaryTarget = (seeded: Seeded, offset: number): Target => ({
  method: "GET",
  path: `/api/leaderboards/${seeded.leaderboardId}/human/${offset === 0 ? "" : `?offset=${offset}`}`,
  headers: { authorization: `Bearer ${seeded.jwt}` }
})

/** The summary must be whole before anything is timed. */
const check = async (podium: Podium, seeded: Seeded): Promise<string> => {
  const summary = await json(podium, "GET", summaryTarget(seeded, 0).path, seeded.jwt, undefined, 200)
  const rows = summary.ranking.rows as Array<{ total: number }>
  const problems = [
    summary.total === caseCount ? "" : `total ${summary.total}, not ${caseCount}`,
    rows.length === candidateCount ? "" : `${rows.length} ranking rows, not ${candidateCount}`,
    summary.ranking.confirmed === seeded.confirmed
      ? ""
      : `ranking.confirmed ${summary.ranking.confirmed}, but SQL counts ${seeded.confirmed}`,
    summary.cases.length === 50 ? "" : `a page of ${summary.cases.length} cases`
  ].filter((problem) => problem !== "")
  if (problems.length > 0) throw new Error(`the summary is wrong: ${problems.join("; ")}`)
  return `total ${summary.total}, pending ${summary.pending}, current_pending ${summary.current_pending}, ` +
    `ranking.confirmed ${summary.ranking.confirmed} (SQL: ${seeded.confirmed}), comparable ${summary.ranking.comparable}, ` +
    `ranking rows ${rows.length} with ${rows.map((r) => r.total).join("/")} judged`
}

/** Latencies to the microsecond, with the p95 that autocannon (p50, p90, p97.5, p99) does not give. */
interface Precise {
  readonly connections: number
  readonly requests: number
  readonly p50Us: number
  readonly p95Us: number
  readonly p99Us: number
  readonly meanUs: number
}

/**
 * `connections` kept-alive sockets, each sending one request at a time for `seconds`, in a worker
 * thread (as autocannon and Sequential.ts do), timed from write to the answer's last byte.
 */
const clientSource = `
const { parentPort, workerData } = require("node:worker_threads")
const http = require("node:http")
const { url, headers, connections, seconds } = workerData
const us = []
const statuses = {}
const loop = async (deadline) => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  while (Date.now() < deadline) {
    await new Promise((resolve, reject) => {
      const started = process.hrtime.bigint()
      http.get(url, { headers, agent }, (response) => {
        response.resume()
        response.on("end", () => {
          statuses[response.statusCode] = (statuses[response.statusCode] || 0) + 1
          us.push(Number(process.hrtime.bigint() - started) / 1000)
          resolve()
        })
      }).on("error", reject)
    })
  }
  agent.destroy()
}
const deadline = Date.now() + seconds * 1000
Promise.all(Array.from({ length: connections }, () => loop(deadline)))
  .then(() => parentPort.postMessage({ us, statuses }), (error) => parentPort.postMessage({ error: String(error) }))
`

const precise = (url: string, target: Target, connections: number, seconds: number): Promise<Precise> =>
  new Promise((resolve, reject) => {
    const worker = new Worker(clientSource, {
      eval: true,
      workerData: { url: url + target.path, headers: target.headers ?? {}, connections, seconds }
    })
    worker.once("error", reject)
    worker.once("message", (message: { us?: Array<number>; statuses?: Record<string, number>; error?: string }) => {
      void worker.terminate()
      if (message.error !== undefined) return reject(new Error(message.error))
      if (Object.keys(message.statuses!).some((status) => !status.startsWith("2"))) {
        return reject(new Error(`${target.path} answered ${JSON.stringify(message.statuses)}`))
      }
      const sorted = [...message.us!].sort((a, b) => a - b)
      const at = (p: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!)
      resolve({
        connections,
        requests: sorted.length,
        p50Us: at(50),
        p95Us: at(95),
        p99Us: at(99),
        meanUs: Math.round(sorted.reduce((sum, us) => sum + us, 0) / sorted.length)
      })
    })
  })

/** As `runBenchmark`'s timing (autocannon, whole ms), then the same levels again to the microsecond. */
const timeBoth = async (title: string, podium: Podium, target: Target, settings: Settings) => {
  const { memoryBefore, runs } = await time(title, podium, target, { ...settings, connections: levels })
  const timed: Array<Precise> = []
  for (const connections of levels) {
    process.stderr.write(`  ${title}: ${connections} connection(s) for ${settings.seconds} s (to the microsecond)\n`)
    timed.push(await precise(podium.url, target, connections, settings.seconds))
    await settle()
  }
  return { runs, precise: timed, serverLogs: podium.logs.tally(), memoryBefore, memoryAfter: memory() }
}

/**
 * With BENCH_EXPLAIN set: the summary's statements as the repository sends them (its own code,
 * over a separate connection), each also run under EXPLAIN (ANALYZE, BUFFERS), plans to stderr.
 */
const explain = async (databaseUrl: string, seeded: Seeded, offsets: ReadonlyArray<number>) => {
  const plans: Array<string> = []
  const explaining: Statement.Transformer = (statement, sql) =>
    sql<Record<string, string>>`EXPLAIN (ANALYZE, BUFFERS) ${statement}`.pipe(
      Effect.tap((rows) => Effect.sync(() => plans.push(rows.map((row) => row["QUERY PLAN"]).join("\n")))),
      Effect.provideService(Statement.CurrentTransformer, undefined),
      Effect.as(statement),
      Effect.orDie
    )
  const runtime = ManagedRuntime.make(
    HumanCaseRepositoryPg.layer.pipe(
      Layer.provide(Layer.merge(LeaderboardRepositoryPg.layer, ServingHistoryPg.layer)),
      Layer.provide(ChangeFeed.layer),
      Layer.provide(PgClient.layer({ url: Redacted.make(databaseUrl) }))
    )
  )
  try {
    const summaryStatements = Effect.gen(function*() {
      const cases = yield* HumanCaseRepository
      const { candidateIds, configuration, leaderboardId } = seeded
      yield* cases.counts(leaderboardId, configuration)
      for (const offset of offsets) yield* cases.page(leaderboardId, configuration, { offset, limit: 50 })
      yield* cases.tallies(leaderboardId, configuration, candidateIds)
    })
    await runtime.runPromise(summaryStatements) // warm, as under load
    await runtime.runPromise(summaryStatements.pipe(Effect.provideService(Statement.CurrentTransformer, explaining)))
  } finally {
    await runtime.dispose()
  }
  for (const plan of plans) process.stderr.write(`\n${plan}\n`)
}

export const HumanBench: SelfRunningBenchmark = {
  name: "human",
  description: `GET /api/leaderboards/{id}/human/ (summary) over ${caseCount} cases x ${candidateCount} candidates`,
  scenarios: async () => {
    throw new Error("the human benchmark runs itself (HumanBench.run)")
  },
  run: async (databases, settings) => {
    const databaseUrl = await databases.create()
    const offsets = [0, caseCount - 50]
    const podium = await startBenchPodium(databaseUrl, env)
    let seeded: Seeded
    let checked: string
    const timed: Array<{ scenario: Scenario } & Awaited<ReturnType<typeof timeBoth>>> = []
    try {
      seeded = await prepare(podium, databaseUrl)
      checked = await check(podium, seeded)
      process.stderr.write(`  human: ${checked}\n`)
      for (const offset of offsets) {
        const scenario = { name: `session GET summary offset ${offset}`, target: summaryTarget(seeded, offset) }
        timed.push({ scenario, ...await timeBoth(`human / ${scenario.name}`, podium, scenario.target, settings) })
      }
    } finally {
      await podium.stop()
    }
    if (process.env["BENCH_EXPLAIN"]) await explain(databaseUrl, seeded, offsets)

    const calls = new SpanCounter()
    const counting = await startBenchPodium(databaseUrl, env, calls)
    const results: Array<ScenarioResult> = []
    try {
      for (const { scenario, ...measured } of timed) {
        calls.reset()
        for (let i = 0; i < settings.countedRequests; i++) await expectSuccess(counting.url, scenario.target)
        results.push({ benchmark: "human", scenario: scenario.name, ...measured, callsPerRequest: calls.perRequest() })
      }
    } finally {
      await counting.stop()
    }

    const ms = (us: number) => (us / 1000).toFixed(2)
    const notes = [
      `human: seeded ${caseCount} cases (about 90% in the current configuration), ${caseCount * candidateCount} ` +
      `responses; human_cases ${seeded.humanCasesMb.toFixed(1)} MB, human_responses ${seeded.humanResponsesMb.toFixed(1)} MB ` +
      "with indexes, VACUUM (ANALYZE) after seeding",
      `human: check: ${checked}`,
      `human: each connection one request at a time, to the microsecond (target: p95 under ${targetP95Ms} ms)`,
      ...timed.flatMap(({ precise, scenario }) =>
        precise.map((p) =>
          `  ${scenario.name}, ${String(p.connections).padStart(2)} conn: ${p.requests} requests, p50 ${ms(p.p50Us)} ms, ` +
          `p95 ${ms(p.p95Us)} ms, p99 ${ms(p.p99Us)} ms, mean ${ms(p.meanUs)} ms: ` +
          (p.p95Us < targetP95Ms * 1000 ? "met" : "NOT met")
        )
      )
    ]
    return { results, notes }
  }
}
