import { makeUuidV7 } from "@podium/adapters-node/IdGeneratorUuidV7"
import { randomUUID } from "node:crypto"
import pg from "pg"
import { from as copyFrom } from "pg-copy-streams"
import { benchSession, type Podium, type ScenarioResult, type Settings, startBenchPodium } from "./Benchmark.ts"
import type { SelfRunningBenchmark } from "./InferenceBench.ts"
import { expectSuccess, hammer, type Memory, memory, type Run, type Target } from "./Load.ts"
import { SpanCounter } from "./SpanCounter.ts"
import { copyOut, inWorker } from "./Streams.ts"

/** Rows per batch push, and per COPY of the reference. */
const batchRows = 1000
/** Concurrent clients pushing batches, and concurrent COPY connections. */
const batchClients = 4
/** Concurrent clients pushing one row at a time. */
const singleClients = 50
/** Rows of the version downloaded. */
const downloadRows = 1_000_000
/**
 * Push against COPY FROM (issue 30: 0.65x, held as the median of 5 runs; issue 14 measured why
 * 0.75x cannot be held: Node's parse, check and re-serialise of each row against COPY's 3 ms
 * client), download against COPY TO (issue 10).
 */
const pushRatioTarget = 0.65
const downloadRatioTarget = 0.6

/** A support ticket and its answer: realistic fields, text that differs from row to row. */
const topics: ReadonlyArray<readonly [ask: string, answer: string]> = [
  ["reset the password of", "Settings > Security > Reset password; the link lasts 30 minutes."],
  ["change the billing email of", "Billing > Contacts > Edit: the new address gets the next invoice."],
  ["export the invoices of", "Billing > Invoices > Export CSV gives the last 24 months at once."],
  ["close", "Settings > Account > Close account; data is kept 30 days in case you change your mind."]
]

const hexOf = (n: number) => ((n * 2654435761) >>> 0).toString(16)

/** Row `n` as a client pushes it (about 300 bytes of JSON). */
const benchRow = (n: number) => {
  const [ask, answer] = topics[n % topics.length]!
  return {
    input: `Ticket ${n}: how do I ${ask} account ${hexOf(n)}? Nothing worked.`,
    expected: `${answer} Ticket ${n} stays open until you confirm.`,
    metadata: { source: "support-chat", customer_id: n, locale: "en-GB" },
    tags: ["support", "bench"]
  }
}

/**
 * Rows `$1`..`$2` as SQL makes them, text for text the rows of `benchRow` (checked before use), so
 * a million can be written without pushing them. `$3` and `$4` are the asks and answers of `topics`.
 */
const generatedRows = `
  SELECT g, input, expected,
    format('{"input":%s,"expected":%s,"metadata":{"source":"support-chat","customer_id":%s,"locale":"en-GB"},'
      || '"tags":["support","bench"]}', to_json(input), to_json(expected), g)::json AS data
  FROM (
    SELECT g,
      format('Ticket %s: how do I %s account %s? Nothing worked.',
        g, ($3::text[])[g % 4 + 1], to_hex((g * 2654435761) % 4294967296)) AS input,
      format('%s Ticket %s stays open until you confirm.', ($4::text[])[g % 4 + 1], g) AS expected
    FROM generate_series($1::bigint, $2::bigint) AS g
  ) AS r`
const topicParams = [topics.map(([ask]) => ask), topics.map(([, answer]) => answer)]

/** The dataset_rows columns a push writes, in the order of the reference's COPY lines. */
const pushedColumns = "leaderboard_id, id, client_id, batch_id, data, input, reference, created_at"

const copyEscapes: Record<string, string> = { "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" }

/** COPY's text format: backslash, newline, carriage return and tab are escaped. */
const copyText = (value: string) => value.replace(/[\\\n\r\t]/g, (c) => copyEscapes[c]!)

const connect = async (databaseUrl: string) => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  return client
}

const copyIn = (client: pg.Client, table: string, lines: string) =>
  new Promise<void>((resolve, reject) => {
    // 'finish' comes once the server has answered the COPY (pg-copy-streams waits for ReadyForQuery)
    const stream = client.query(copyFrom(`COPY ${table} (${pushedColumns}) FROM STDIN`))
    stream.once("finish", resolve)
    stream.once("error", reject)
    stream.end(lines)
  })

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

/**
 * `batchClients` connections each COPY `batchRows` rows at a time into `table` for `seconds`: the
 * rows of the pushed batch with the values a push stores (a fresh UUIDv7 id, no client id, one batch
 * id and time per COPY). As a Run, so it reads beside the push's: one "request" is one COPY.
 */
const copyLoad = async (databaseUrl: string, table: string, leaderboardId: string, seconds: number): Promise<Run> => {
  // the client has its rows ready, as the HTTP client has its body: only ids and times are made per COPY
  const tails = Array.from({ length: batchRows }, (_, i) => {
    const row = benchRow(i + 1)
    return `${copyText(JSON.stringify(row))}\t${copyText(row.input)}\t${copyText(row.expected)}`
  })
  const nextId = makeUuidV7()
  const clients = await Promise.all(Array.from({ length: batchClients }, () => connect(databaseUrl)))
  try {
    const latencies: Array<number> = []
    const started = performance.now()
    const deadline = started + seconds * 1000
    await Promise.all(clients.map(async (client) => {
      while (performance.now() < deadline) {
        const t0 = performance.now()
        const now = new Date().toISOString()
        const head = `${leaderboardId}\t`
        const batch = `\t\\N\t${randomUUID()}\t`
        let lines = ""
        for (const tail of tails) lines += `${head}${nextId(Date.now())}${batch}${tail}\t${now}\n`
        await copyIn(client, table, lines)
        latencies.push(performance.now() - t0)
      }
    }))
    const elapsed = (performance.now() - started) / 1000
    latencies.sort((a, b) => a - b)
    const rps = latencies.length / elapsed
    return {
      connections: batchClients,
      seconds: elapsed,
      requests: latencies.length,
      rps,
      meanMs: rps === 0 ? 0 : (batchClients / rps) * 1000,
      p50Ms: Math.round(percentile(latencies, 0.5)),
      p99Ms: Math.round(percentile(latencies, 0.99)),
      errors: 0,
      non2xx: 0,
      statusCodes: {},
      loopUsPerRequest: null
    }
  } finally {
    await Promise.all(clients.map((client) => client.end()))
  }
}

const ok = (run: Run): number =>
  Object.entries(run.statusCodes).reduce((sum, [code, count]) => (code.startsWith("2") ? sum + count : sum), 0)

const settle = () => new Promise((resolve) => setTimeout(resolve, 250))

const storedRows = async (client: pg.Client, leaderboardId: string): Promise<number> =>
  (await client.query("SELECT count(*)::int AS n FROM dataset_rows WHERE leaderboard_id = $1", [leaderboardId])).rows[0].n

/**
 * A 202 means the rows are committed, so at least the rows of every 2xx answer are stored; a few
 * more come from requests autocannon abandoned in flight when a run stopped (served, not counted).
 */
const storedCheck = (stored: number, answered: number, rowsPerPush: number) =>
  stored >= answered * rowsPerPush
    ? `${stored} rows stored for ${answered} 2xx answers (${answered * rowsPerPush} rows): every answered row is there`
    : `MISSING ROWS: ${stored} rows stored for ${answered} 2xx answers (${answered * rowsPerPush} rows)`

const created = async (podium: Podium, path: string, token: string, json: unknown) => {
  const reply = await podium.request("POST", path, { token, json })
  if (reply.status !== 201) throw new Error(`POST ${path} answered ${reply.status}: ${reply.text}`)
  return reply.body as Record<string, any>
}

const pushTo = (leaderboardId: string, secret: string, body: unknown): Target => ({
  method: "POST",
  path: `/v1/leaderboard/${leaderboardId}/dataset/push`,
  headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
  body: JSON.stringify(body)
})

/** Warms up, then loads `target` at `connections` for `seconds`; 2xx answers of both are counted. */
const timePush = async (title: string, podium: Podium, target: Target, connections: number, settings: Settings) => {
  await expectSuccess(podium.url, target)
  const memoryBefore = memory()
  const warmup = await hammer(podium.url, target, connections, settings.warmupSeconds)
  await settle()
  podium.logs.reset()
  process.stderr.write(`  push / ${title}: ${connections} connection(s) for ${settings.seconds} s\n`)
  const run = await hammer(podium.url, target, connections, settings.seconds)
  await settle()
  return { run, serverLogs: podium.logs.tally(), memoryBefore, memoryAfter: memory(), succeeded: 1 + ok(warmup) + ok(run) }
}

interface Download {
  readonly status: number
  readonly rows: number
  readonly bytes: number
  readonly seconds: number
}

/**
 * The HTTP client of a download runs in its own thread, as autocannon does: on Podium's event loop
 * its reading would be counted as the server's work. It counts lines and bytes, keeping nothing.
 */
const downloaderSource = `
const { parentPort, workerData } = require("node:worker_threads")
const { get } = require("node:http")
const started = performance.now()
get(workerData.url, { headers: workerData.headers }, (response) => {
  let bytes = 0
  let rows = 0
  response.on("data", (chunk) => {
    bytes += chunk.length
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) rows++
  })
  response.on("end", () => {
    parentPort.postMessage({ status: response.statusCode, rows, bytes, seconds: (performance.now() - started) / 1000 })
  })
}).on("error", (error) => parentPort.postMessage({ error: String(error) }))
`

const downloadOverHttp = (url: string, headers: Record<string, string>) =>
  inWorker<Download>(downloaderSource, { url, headers })

/** The reference: the version's rows straight out of PostgreSQL, counted the same way. */
const downloadByCopy = async (client: pg.Client, leaderboardId: string): Promise<Download> => ({
  status: 200,
  // COPY takes no parameters; the id is a UUID this benchmark made
  ...await copyOut(client, `SELECT data FROM dataset_rows WHERE leaderboard_id = '${leaderboardId}' AND version <= 1 ORDER BY id`)
})

/**
 * Peak RSS and heap while `work` runs, sampled every 50 ms (Podium runs in this process), over the
 * first and the second half of its time: memory that grew with the rows sent would peak later.
 */
const peakMemoryDuring = async <A>(work: () => Promise<A>) => {
  const samples: Array<{ readonly at: number; readonly rss: number; readonly heap: number }> = []
  const sample = () => {
    const usage = process.memoryUsage()
    samples.push({ at: performance.now(), rss: usage.rss, heap: usage.heapUsed })
  }
  sample()
  const timer = setInterval(sample, 50)
  try {
    const result = await work()
    sample()
    const middle = (samples[0]!.at + samples[samples.length - 1]!.at) / 2
    const peak = (part: ReadonlyArray<(typeof samples)[number]>): Memory => ({
      rssMb: Math.max(...part.map((s) => s.rss)) / 2 ** 20,
      heapUsedMb: Math.max(...part.map((s) => s.heap)) / 2 ** 20
    })
    return {
      result,
      peak: peak(samples),
      firstHalf: peak(samples.filter((s) => s.at <= middle)),
      secondHalf: peak(samples.filter((s) => s.at > middle)),
      samples: samples.length
    }
  } finally {
    clearInterval(timer)
  }
}

/**
 * A consolidated version of `downloadRows` rows, written with SQL as a consolidation would leave it:
 * the rows with `version` 1, the version, and the dataset's state.
 */
const writeVersion = async (client: pg.Client, leaderboardId: string) => {
  const now = new Date()
  // UUIDv7-shaped ids rising with g, as pushes make them, so the rows lie on disk in id order
  await client.query(
    `INSERT INTO dataset_rows (leaderboard_id, id, client_id, batch_id, data, input, reference, created_at, version)
     SELECT $5::uuid,
       (lpad(to_hex($6::bigint + g / 4096), 12, '0') || '7' || lpad(to_hex(g % 4096), 3, '0') || '8'
         || substr(md5(g::text), 1, 15))::uuid,
       NULL, $7::uuid, data, input, expected, $8, 1
     FROM (${generatedRows}) AS generated`,
    [1, downloadRows, ...topicParams, leaderboardId, now.getTime() - 3_600_000, randomUUID(), now]
  )
  await client.query(
    `INSERT INTO dataset_versions (leaderboard_id, version, row_count, total_rows, added_rows, dropped_duplicates,
       labelled_rows, trigger, floor_id, sha256, created_at)
     VALUES ($1, 1, $2, $2, $2, 0, 0, 'manual', NULL, $3, $4)`,
    // a digest already there keeps the jobs from hashing a million rows during the measurement
    [leaderboardId, downloadRows, "not computed by the benchmark", now]
  )
  await client.query(
    `INSERT INTO datasets (leaderboard_id, latest_version, last_consolidated_at) VALUES ($1, 1, $2)`,
    [leaderboardId, now]
  )
  // as a consolidated table would be some time later: hint bits set, statistics known
  await client.query("VACUUM (ANALYZE) dataset_rows")
}

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(0)
const perSecond = (n: number) => Math.round(n).toLocaleString("en-US")
const verdict = (ratio: number, target: number) =>
  `${ratio.toFixed(2)}x (target >= ${target}x: ${ratio >= target ? "met" : "NOT met"})`

export const DatasetBench: SelfRunningBenchmark = {
  name: "push",
  description: "dataset push (1,000-row and 1-row) and a 1,000,000-row JSONL download, against COPY on the same database",
  scenarios: async () => {
    throw new Error("the push benchmark runs itself (DatasetBench.run)")
  },
  run: async (databases, settings) => {
    const databaseUrl = await databases.create()
    const client = await connect(databaseUrl)
    try {
      // the SQL rows must be the pushed rows, or the download measures other data
      const sample = await client.query(
        `SELECT g::int AS g, data::text AS text, input, expected FROM (${generatedRows}) AS generated ORDER BY g`,
        [1, 5, ...topicParams]
      )
      for (const row of sample.rows) {
        const pushed = benchRow(row.g)
        if (row.text !== JSON.stringify(pushed) || row.input !== pushed.input || row.expected !== pushed.expected) {
          throw new Error(`SQL-made row ${row.g} differs from the pushed row: ${row.text}`)
        }
      }
      const batch = Array.from({ length: batchRows }, (_, i) => benchRow(i + 1))
      const rowBytes = Buffer.byteLength(JSON.stringify(batch)) / batchRows

      const podium = await startBenchPodium(databaseUrl)
      let batchTarget: Target
      let singleTarget: Target
      let batched: Awaited<ReturnType<typeof timePush>>
      let single: Awaited<ReturnType<typeof timePush>>
      let copied: { readonly run: Run; readonly copyMemoryBefore: Memory; readonly copyMemoryAfter: Memory }
      let pushId: string
      let stored: { readonly batched: number; readonly single: number }
      try {
        const jwt = await benchSession("bench-datasets")
        const scopes = ["leaderboards:write", "leaderboards:read"]
        const { secret } = await created(podium, "/api/tokens", jwt, { name: "bench", scopes })
        const leaderboard = async () =>
          (await created(podium, "/api/leaderboards", jwt, { name: "bench", dataset_type: "PUSH" })).leaderboard.id as string
        pushId = await leaderboard()
        const singleId = await leaderboard()
        batchTarget = pushTo(pushId, secret, batch)
        singleTarget = pushTo(singleId, secret, benchRow(1))

        batched = await timePush(`${batchRows}-row batches`, podium, batchTarget, batchClients, settings)
        stored = { batched: await storedRows(client, pushId), single: 0 }

        await client.query("CREATE TABLE copy_reference (LIKE dataset_rows INCLUDING ALL)")
        process.stderr.write(`  push / COPY reference: ${batchClients} connections for ${settings.seconds} s\n`)
        const copyMemoryBefore = memory()
        await copyLoad(databaseUrl, "copy_reference", pushId, settings.warmupSeconds)
        const run = await copyLoad(databaseUrl, "copy_reference", pushId, settings.seconds)
        copied = { run, copyMemoryBefore, copyMemoryAfter: memory() }

        single = await timePush("1-row pushes", podium, singleTarget, singleClients, settings)
        stored = { ...stored, single: await storedRows(client, singleId) }
      } finally {
        await podium.stop()
      }

      // statements per push, on a second server with a counting tracer (as runBenchmark does)
      const calls = new SpanCounter()
      const counting = await startBenchPodium(databaseUrl, {}, calls)
      const callsPerRequest: Array<Record<string, number>> = []
      try {
        for (const target of [batchTarget, singleTarget]) {
          calls.reset()
          for (let i = 0; i < settings.countedRequests; i++) await expectSuccess(counting.url, target)
          callsPerRequest.push(calls.perRequest())
        }
      } finally {
        await counting.stop()
      }

      // the download, on a fresh server: a million rows written by SQL
      const server = await startBenchPodium(databaseUrl)
      let downloads: { readonly http: Download; readonly copy: Download }
      let downloadMemory: {
        readonly before: Memory
        readonly peak: Memory
        readonly firstHalf: Memory
        readonly secondHalf: Memory
        readonly samples: number
        readonly after: Memory
      }
      try {
        const jwt = await benchSession("bench-datasets")
        const { secret } = await created(server, "/api/tokens", jwt, { name: "download", scopes: ["leaderboards:read"] })
        const { leaderboard } = await created(server, "/api/leaderboards", jwt, { name: "download", dataset_type: "PUSH" })
        const id = leaderboard.id as string
        process.stderr.write(`  push / download: writing a ${downloadRows}-row version with SQL\n`)
        await writeVersion(client, id)
        const url = `${server.url}/v1/leaderboard/${id}/dataset`
        const headers = { authorization: `Bearer ${secret}` }
        // one round each first, untimed, so both read a warm table
        process.stderr.write("  push / download: COPY TO STDOUT and GET, once to warm up, then timed\n")
        await downloadByCopy(client, id)
        await downloadOverHttp(url, headers)
        const copy = await downloadByCopy(client, id)
        const before = memory()
        server.logs.reset()
        const { result: http, ...peaks } = await peakMemoryDuring(() => downloadOverHttp(url, headers))
        downloadMemory = { before, ...peaks, after: memory() }
        if (http.status !== 200 || http.rows !== downloadRows) {
          throw new Error(`the download answered ${http.status} with ${http.rows} rows, not ${downloadRows}`)
        }
        downloads = { http, copy }
      } finally {
        await server.stop()
      }

      const batchRowsPerSecond = batched.run.rps * batchRows
      const copyRowsPerSecond = copied.run.rps * batchRows
      const pushRatio = batchRowsPerSecond / copyRowsPerSecond
      const httpRowsPerSecond = downloads.http.rows / downloads.http.seconds
      const copyOutRowsPerSecond = downloads.copy.rows / downloads.copy.seconds
      const downloadRatio = httpRowsPerSecond / copyOutRowsPerSecond
      const { succeeded: batchedOk, run: batchRun, ...batchMeasured } = batched
      const { succeeded: singleOk, run: singleRun, ...singleMeasured } = single
      const results: Array<ScenarioResult> = [
        {
          benchmark: "push",
          scenario: `POST .../dataset/push, ${batchRows}-row batches`,
          runs: [batchRun],
          ...batchMeasured,
          callsPerRequest: callsPerRequest[0]!,
          rowsPerSecond: batchRowsPerSecond,
          rowBytes
        } as ScenarioResult,
        {
          benchmark: "push",
          scenario: `COPY ${batchRows} rows FROM STDIN (reference)`,
          runs: [copied.run],
          serverLogs: {},
          memoryBefore: copied.copyMemoryBefore,
          memoryAfter: copied.copyMemoryAfter,
          callsPerRequest: {},
          rowsPerSecond: copyRowsPerSecond
        } as ScenarioResult,
        {
          benchmark: "push",
          scenario: "POST .../dataset/push, 1 row",
          runs: [singleRun],
          ...singleMeasured,
          callsPerRequest: callsPerRequest[1]!,
          rowsPerSecond: singleRun.rps
        } as ScenarioResult,
        {
          benchmark: "push",
          scenario: `GET .../dataset, ${downloadRows} rows`,
          runs: [],
          serverLogs: server.logs.tally(),
          memoryBefore: downloadMemory.before,
          memoryAfter: downloadMemory.after,
          callsPerRequest: {},
          download: downloads,
          peakMemory: downloadMemory.peak,
          peakMemoryFirstHalf: downloadMemory.firstHalf,
          peakMemorySecondHalf: downloadMemory.secondHalf
        } as ScenarioResult
      ]
      const m = downloadMemory
      const notes = [
        `push: rows of ${rowBytes.toFixed(0)} bytes of JSON on average (input, expected, metadata, tags)`,
        `  ${batchRows}-row batches, ${batchClients} clients: ${perSecond(batchRowsPerSecond)} rows/s ` +
        `(${batchRun.rps.toFixed(1)} pushes/s, p50 ${batchRun.p50Ms} ms)`,
        `  COPY FROM STDIN, ${batchClients} connections, ${batchRows} rows each: ${perSecond(copyRowsPerSecond)} rows/s ` +
        `(${copied.run.rps.toFixed(1)} COPYs/s, p50 ${copied.run.p50Ms} ms)`,
        `  push / COPY: ${verdict(pushRatio, pushRatioTarget)}`,
        `  1-row pushes, ${singleClients} clients: ${perSecond(singleRun.rps)} rows/s (p50 ${singleRun.p50Ms} ms)`,
        `  ${batchRows}-row pushes: ${storedCheck(stored.batched, batchedOk, batchRows)}`,
        `  1-row pushes: ${storedCheck(stored.single, singleOk, 1)}`,
        `download: ${downloadRows} rows, HTTP ${mb(downloads.http.bytes)} MB in ${downloads.http.seconds.toFixed(2)} s, ` +
        `COPY TO STDOUT ${mb(downloads.copy.bytes)} MB in ${downloads.copy.seconds.toFixed(2)} s`,
        `  GET .../dataset: ${perSecond(httpRowsPerSecond)} rows/s; COPY: ${perSecond(copyOutRowsPerSecond)} rows/s`,
        `  GET / COPY: ${verdict(downloadRatio, downloadRatioTarget)}`,
        `  process RSS: ${m.before.rssMb.toFixed(0)} MB before (after GC), ${m.peak.rssMb.toFixed(0)} MB peak during ` +
        `(every 50 ms), ${m.after.rssMb.toFixed(0)} MB after (after GC); heap ${m.before.heapUsedMb.toFixed(1)} -> ` +
        `peak ${m.peak.heapUsedMb.toFixed(1)} -> ${m.after.heapUsedMb.toFixed(1)} MB`,
        `  peaks by half of the download (${m.samples} samples): RSS ${m.firstHalf.rssMb.toFixed(0)} MB then ` +
        `${m.secondHalf.rssMb.toFixed(0)} MB, heap ${m.firstHalf.heapUsedMb.toFixed(1)} MB then ` +
        `${m.secondHalf.heapUsedMb.toFixed(1)} MB`
      ]
      return { results, notes }
    } finally {
      await client.end()
    }
  }
}
