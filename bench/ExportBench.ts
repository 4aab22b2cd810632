import pg from "pg"
import { benchSession, type ScenarioResult, startBenchPodium } from "./Benchmark.ts"
import type { SelfRunningBenchmark } from "./InferenceBench.ts"
import { json } from "./InferenceBench.ts"
import { memory } from "./Load.ts"
import { copyOut, inWorker } from "./Streams.ts"

/** Traces of the leaderboard exported. */
const exportRows = 200_000
/** Rows per page (the most the route gives) and per database round trip (the most it allows). */
const pageLimit = 1000
const batchLimit = 100
/** Issue 14's target: trace export against COPY TO of the same rows as JSON. */
const ratioTarget = 0.6

interface Exported {
  readonly status: number
  readonly rows: number
  readonly bytes: number
  readonly pages: number
  readonly seconds: number
  /** Medians per page, in ms: to the response's headers, and to its end. */
  readonly firstByteMs?: number
  readonly pageMs?: number
}

/**
 * The export's client, in its own thread (as autocannon is): it follows `X-Next-Cursor` page by
 * page over one kept-alive connection, counting lines and bytes, keeping nothing.
 */
const exporterSource = `
const { parentPort, workerData } = require("node:worker_threads")
const { Agent, get } = require("node:http")
const agent = new Agent({ keepAlive: true, maxSockets: 1 })
const started = performance.now()
let bytes = 0
let rows = 0
let pages = 0
const firstBytes = []
const totals = []
const median = (values) => values.slice().sort((a, b) => a - b)[values.length >> 1]
const page = (cursor) => {
  const asked = performance.now()
  const url = workerData.url + (cursor === undefined ? "" : "&cursor=" + cursor)
  get(url, { headers: workerData.headers, agent }, (response) => {
    firstBytes.push(performance.now() - asked)
    if (response.statusCode !== 200) {
      response.resume()
      return parentPort.postMessage({ status: response.statusCode, rows, bytes, pages, seconds: 0 })
    }
    response.on("data", (chunk) => {
      bytes += chunk.length
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) rows++
    })
    response.on("end", () => {
      totals.push(performance.now() - asked)
      pages++
      const next = response.headers["x-next-cursor"]
      if (next !== undefined) return page(next)
      agent.destroy()
      parentPort.postMessage({
        status: 200, rows, bytes, pages, seconds: (performance.now() - started) / 1000,
        firstByteMs: median(firstBytes), pageMs: median(totals)
      })
    })
  }).on("error", (error) => parentPort.postMessage({ error: String(error) }))
}
page(undefined)
`

const exportOverHttp = (url: string, headers: Record<string, string>) =>
  inWorker<Exported>(exporterSource, { url, headers })

/** The wire columns of a trace, as the export sends them (no workspace_id). */
const wireColumns = "id, leaderboard_id, leaderboard_model_id, source, run_id, input, messages, output, status, error, " +
  "latency_ms, usage, cost_usd, token_id, created_at"

/** The reference: the same traces as JSON lines straight out of PostgreSQL, counted the same way. */
const exportByCopy = async (client: pg.Client, leaderboardId: string): Promise<Exported> => ({
  status: 200,
  pages: 1,
  // COPY takes no parameters; the id is a UUID this benchmark made
  ...await copyOut(client,
    `SELECT row_to_json(t) FROM (SELECT ${wireColumns} FROM traces WHERE leaderboard_id = '${leaderboardId}' ORDER BY id) t`)
})

/**
 * Inference traces as the service writes them: a system and a user message, an answer, usage and
 * cost, and time-ordered ids (UUIDv7-shaped, one millisecond apart, in insertion order) as Podium's
 * own, so an export in id order reads the table in about the order it was written.
 */
const writeTraces = (client: pg.Client, workspaceId: string, leaderboardId: string) =>
  client.query(
    `INSERT INTO traces (id, workspace_id, leaderboard_id, leaderboard_model_id, source, run_id, input, messages, output,
       status, error, latency_ms, usage, cost_usd, token_id, created_at)
     SELECT (lpad(to_hex(floor(extract(epoch FROM now()) * 1000)::bigint - $3 + g), 12, '0') || '7' ||
         substr(md5(g::text), 1, 3) || '8' || substr(md5(g::text), 4, 15))::uuid, $1, $2, NULL, 'inference', NULL, 'How do I export the invoices of ' || g || '?',
       jsonb_build_array(
         jsonb_build_object('role', 'system', 'content', 'Answer briefly, in the customer''s language.'),
         jsonb_build_object('role', 'user', 'content', 'How do I export the invoices of ' || g || '?')),
       'Billing > Invoices > Export CSV gives the last 24 months at once (request ' || g || ').',
       'success', NULL, 120 + (g % 400) / 10.0,
       jsonb_build_object('prompt_tokens', 40 + g % 30, 'completion_tokens', 25 + g % 20, 'total_tokens', 65 + g % 50),
       (g % 1000) / 1e6, NULL, now() - make_interval(secs => $3 - g)
     FROM generate_series(1, $3) AS g`,
    [workspaceId, leaderboardId, exportRows]
  )

const perSecond = (n: number) => Math.round(n).toLocaleString("en-US")

export const ExportBench: SelfRunningBenchmark = {
  name: "export",
  description: `trace export (${exportRows.toLocaleString("en-US")} traces, JSONL pages of ${pageLimit}) against COPY TO of the same rows as JSON`,
  scenarios: async () => {
    throw new Error("the export benchmark runs itself (ExportBench.run)")
  },
  run: async (databases) => {
    const databaseUrl = await databases.create()
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    const server = await startBenchPodium(databaseUrl)
    try {
      const jwt = await benchSession("bench-export")
      const { secret } = await json(server, "POST", "/api/tokens", jwt, { name: "export", scopes: ["leaderboards:read"] }, 201)
      const { leaderboard } = await json(server, "POST", "/api/leaderboards", jwt, { name: "export", dataset_type: "PUSH" }, 201)
      const id = leaderboard.id as string
      process.stderr.write(`  export: writing ${exportRows} traces with SQL\n`)
      await writeTraces(client, leaderboard.business_id, id)
      // as autovacuum leaves an insert-only table: statistics, and a visibility map for index-only scans
      await client.query("VACUUM ANALYZE traces")
      const url = `${server.url}/v1/leaderboard/${id}/traces?format=jsonl&limit=${pageLimit}&batch_limit=${batchLimit}`
      const headers = { authorization: `Bearer ${secret}` }
      // one round each first, untimed, so both read a warm table
      process.stderr.write("  export: COPY TO STDOUT and the paged GET, once to warm up, then timed\n")
      await exportByCopy(client, id)
      await exportOverHttp(url, headers)
      const copy = await exportByCopy(client, id)
      const memoryBefore = memory()
      server.logs.reset()
      const http = await exportOverHttp(url, headers)
      const memoryAfter = memory()
      if (http.status !== 200 || http.rows !== exportRows) {
        throw new Error(`the export answered ${http.status} with ${http.rows} rows, not ${exportRows}`)
      }
      const httpRate = http.rows / http.seconds
      const copyRate = copy.rows / copy.seconds
      const ratio = httpRate / copyRate
      const results: Array<ScenarioResult> = [{
        benchmark: "export",
        scenario: `GET .../traces, ${exportRows} rows in pages of ${pageLimit}`,
        runs: [],
        serverLogs: server.logs.tally(),
        memoryBefore,
        memoryAfter,
        callsPerRequest: {},
        export: { http, copy, ratio }
      } as ScenarioResult]
      const notes = [
        `export: ${exportRows} traces, HTTP ${(http.bytes / 2 ** 20).toFixed(0)} MB in ${http.pages} pages in ` +
        `${http.seconds.toFixed(2)} s (per page, median: headers after ${http.firstByteMs?.toFixed(1)} ms, end after ` +
        `${http.pageMs?.toFixed(1)} ms), COPY ${(copy.bytes / 2 ** 20).toFixed(0)} MB in ${copy.seconds.toFixed(2)} s`,
        `  GET .../traces: ${perSecond(httpRate)} rows/s; COPY (SELECT row_to_json(t) ...) TO STDOUT: ${perSecond(copyRate)} rows/s`,
        `  export / COPY: ${ratio.toFixed(2)}x (target >= ${ratioTarget}x: ${ratio >= ratioTarget ? "met" : "NOT met"})`
      ]
      return { results, notes }
    } finally {
      await server.stop()
      await client.end()
    }
  }
}
