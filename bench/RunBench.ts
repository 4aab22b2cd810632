import { type Exit, Layer, References, Tracer } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import pg from "pg"
import { startPodium } from "../test/support/Podium.ts"
import { benchSession, type Podium, type ScenarioResult, startBenchPodium } from "./Benchmark.ts"
import type { SelfRunningBenchmark } from "./InferenceBench.ts"
import { memory } from "./Load.ts"
import { LogTally } from "./LogTally.ts"

/** Issue 11: 1,000 rows x 4 candidates, every call answered after 20 ms. */
const rows = 1000
const candidates = 4
const upstreamDelayMs = 20
/** RUN_CONCURRENCY levels, the first. */
const concurrencies = [16, 4]
/** Timed runs per level. */
const timedRuns = 3
/**
 * Untimed runs before them, to warm up the JIT, the pools and the caches: CPU per cell kept falling
 * over the first five runs of a fresh process (0.93 to 0.70 ms at RUN_CONCURRENCY 16), so the first
 * level gets three; later levels run the same code in the same process.
 */
const warmupRuns = (level: number) => (level === 0 ? 3 : 1)
/** Issue 11's targets, at the first level. */
const efficiencyTarget = 0.8
const cpuPerCellTargetMs = 1
/**
 * How often the benchmark looks at the run (its CPU is counted as Podium's: rarely, and the wall
 * time is the server's own created_at to finished_at), and then at the traces it wrote.
 */
const pollMs = 200
const tracePollMs = 50

/** Candidate `m{k}` knows the answer to question n when n % 4 >= k: 100%, 75%, 50%, 25% right. */
const correctOf = (k: number) => Array.from({ length: rows }, (_, n) => n).filter((n) => n % 4 >= k).length

/**
 * The upstream runs in its own process, as a remote provider runs on its own machine: Podium's CPU
 * is then `process.cpuUsage()` of this process, with nothing of the upstream in it. It serves the
 * dataset (`GET /data.jsonl`) and answers `POST .../chat/completions` after `delayMs`, counting
 * calls in flight per model.
 */
const upstreamSource = `
const { createServer } = require("node:http")
const rows = ${rows}
const delayMs = ${upstreamDelayMs}
const dataset = Buffer.from(Array.from({ length: rows }, (_, n) =>
  JSON.stringify({ input: "Question " + n + ": which ticket queue handles refunds for order " + (n * 7919) + "?",
    expected: "queue " + (n % 13) })).join("\\n"))
let calls = 0
let connections = 0
const inFlight = new Map()
const maxInFlight = new Map()
const answer = (model, content) => {
  const n = Number(/Question (\\d+)/.exec(content)?.[1] ?? -1)
  const k = Number(String(model).slice(1))
  return n >= 0 && n % 4 >= k ? "queue " + (n % 13) : "I do not know"
}
const server = createServer((request, response) => {
  const chunks = []
  request.on("data", (chunk) => chunks.push(chunk))
  request.on("end", () => {
    if (request.method === "GET" && request.url === "/data.jsonl") {
      response.writeHead(200, { "content-type": "application/jsonl", "content-length": dataset.length })
      return response.end(dataset)
    }
    if (request.method !== "POST" || !request.url.endsWith("/chat/completions")) {
      response.writeHead(404, { "content-type": "application/json" })
      return response.end("{}")
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
    const user = body.messages.filter((m) => m.role === "user").pop()
    const model = String(body.model)
    calls++
    const now = (inFlight.get(model) ?? 0) + 1
    inFlight.set(model, now)
    if (now > (maxInFlight.get(model) ?? 0)) maxInFlight.set(model, now)
    const reply = Buffer.from(JSON.stringify({
      id: "chatcmpl-" + calls,
      object: "chat.completion",
      created: 1,
      model,
      choices: [{ index: 0, message: { role: "assistant", content: answer(model, String(user?.content ?? "")) }, finish_reason: "stop" }],
      usage: { prompt_tokens: 40, completion_tokens: 3, total_tokens: 43 }
    }))
    setTimeout(() => {
      inFlight.set(model, inFlight.get(model) - 1)
      response.writeHead(200, { "content-type": "application/json", "content-length": reply.length })
      response.end(reply)
    }, delayMs)
  })
})
server.on("connection", () => connections++)
server.listen(0, "127.0.0.1", () => process.send({ port: server.address().port }))
process.on("message", (message) => {
  if (message === "stats") {
    process.send({ calls, connections, maxInFlight: Object.fromEntries(maxInFlight), cpu: process.cpuUsage() })
    maxInFlight.clear()
  }
  if (message === "close") {
    server.closeAllConnections()
    server.close(() => process.exit(0))
  }
})
`

interface UpstreamStats {
  readonly calls: number
  readonly connections: number
  /** Most calls in flight at once per model since the last look. */
  readonly maxInFlight: Record<string, number>
  readonly cpu: NodeJS.CpuUsage
}

interface Upstream {
  readonly url: string
  readonly stats: () => Promise<UpstreamStats>
  readonly close: () => Promise<void>
}

const startUpstream = async (): Promise<Upstream> => {
  const child: ChildProcess = spawn(process.execPath, ["-e", upstreamSource], { stdio: ["ignore", "inherit", "inherit", "ipc"] })
  const next = <A>(pick: (message: Record<string, unknown>) => A | undefined) =>
    new Promise<A>((resolve, reject) => {
      const onMessage = (message: Record<string, unknown>) => {
        const value = pick(message)
        if (value === undefined) return
        child.off("message", onMessage)
        child.off("exit", onExit)
        resolve(value)
      }
      const onExit = (code: number | null) => reject(new Error(`the upstream exited with ${code}`))
      child.on("message", onMessage)
      child.once("exit", onExit)
    })
  const port = await next((message) => message["port"] as number | undefined)
  return {
    url: `http://127.0.0.1:${port}`,
    stats: () => {
      const reply = next((message) => message["calls"] === undefined ? undefined : message as unknown as UpstreamStats)
      child.send("stats")
      return reply
    },
    close: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve))
      child.send("close")
      await exited
    }
  }
}

const json = async (podium: Podium, method: string, path: string, token: string, body: unknown, status: number) => {
  const reply = await podium.request(method, path, { token, json: body })
  if (reply.status !== status) throw new Error(`${method} ${path} answered ${reply.status}: ${reply.text}`)
  return reply.body as Record<string, any>
}

/** An exact GET leaderboard over the upstream's dataset, with candidates m0..m3 at the upstream. */
const prepare = async (podium: Podium, jwt: string, upstreamUrl: string) => {
  const id = (await json(podium, "POST", "/api/leaderboards", jwt, {
    name: "bench runs",
    dataset_type: "GET",
    dataset_url: `${upstreamUrl}/data.jsonl`,
    eval_type: "exact"
  }, 201)).leaderboard.id as string
  const ids: Array<string> = []
  for (let k = 0; k < candidates; k++) {
    const { model } = await json(podium, "POST", `/api/leaderboards/${id}/models`, jwt, {
      name: `m${k}`,
      platform: "Custom",
      url: `${upstreamUrl}/v1`,
      auth_type: "none",
      model_name: `m${k}`
    }, 201)
    ids.push(model.id as string)
  }
  return { id, candidateIds: ids }
}

/**
 * Counts every outbound call (span of kind "client": SQL statements, HTTP requests) and its mean
 * duration, whatever started it: a run is background work, with no request above its calls. A
 * tracer puts every fiber on Effect's traced path, so it is used on a server that is not timed.
 */
class CallCounter {
  private readonly calls = new Map<string, { count: number; nanos: bigint }>()

  readonly layer = Layer.succeed(Tracer.Tracer, Tracer.make({
    span: (options) => new CountedSpan(options, (span, endTime) => this.ended(span, endTime))
  }))

  reset(): void {
    this.calls.clear()
  }

  /** Calls per cell by kind, and their mean duration, most frequent first. */
  perCell(cells: number): ReadonlyArray<{ readonly name: string; readonly perCell: number; readonly meanMs: number }> {
    return [...this.calls].map(([name, { count, nanos }]) => ({ name, perCell: count / cells, meanMs: Number(nanos / BigInt(count)) / 1e6 }))
      .sort((a, b) => b.perCell - a.perCell)
  }

  private ended(span: Tracer.NativeSpan, endTime: bigint): void {
    if (span.kind !== "client") return
    const statement = span.attributes.get("db.query.text")
    const method = span.attributes.get("http.request.method")
    const name = typeof statement === "string"
      ? `sql ${statement.replace(/\s+/g, " ").trim().slice(0, 72)}`
      : typeof method === "string"
      ? `http ${method} ${String(span.attributes.get("url.path") ?? "")}`
      : span.name
    const entry = this.calls.get(name) ?? { count: 0, nanos: 0n }
    entry.count++
    entry.nanos += endTime - span.startTime
    this.calls.set(name, entry)
  }
}

class CountedSpan extends Tracer.NativeSpan {
  private readonly onEnd: (span: Tracer.NativeSpan, endTime: bigint) => void

  constructor(options: ConstructorParameters<typeof Tracer.NativeSpan>[0], onEnd: (span: Tracer.NativeSpan, endTime: bigint) => void) {
    super(options)
    this.onEnd = onEnd
  }

  override end(endTime: bigint, exit: Exit.Exit<unknown, unknown>): void {
    const ended = this.status._tag === "Ended"
    super.end(endTime, exit)
    if (!ended) this.onEnd(this, endTime)
  }
}

const startCountingPodium = async (databaseUrl: string, env: Record<string, string>, calls: CallCounter): Promise<Podium> => {
  const logs = new LogTally("call-counting server")
  const podium = await startPodium({ LOG_LEVEL: "Warn", ...env, DATABASE_URL: databaseUrl }, {
    logging: Layer.mergeAll(logs.layer, Layer.succeed(References.MinimumLogLevel, "Warn")),
    tracing: calls.layer
  })
  return { ...podium, logs }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const cpuMs = (from: NodeJS.CpuUsage, to: NodeJS.CpuUsage) => (to.user - from.user + to.system - from.system) / 1000

interface Measured {
  /** Server clock: the run's created_at to its finished_at. */
  readonly wallMs: number
  /** Benchmark clock: the POST sent to the poll that saw it end (up to `pollMs` late). */
  readonly seenMs: number
  /** created_at to started_at: the dataset fetched and its rows stored. */
  readonly prepareMs: number
  /** This process's CPU (Podium, and the benchmark's few polls) from the POST to the run seen ended. */
  readonly cpuMs: number
  /** The same, until every call's trace was in the database (traces are written in batches, after the cells). */
  readonly cpuWithTracesMs: number
  readonly upstreamCalls: number
  readonly upstreamConnections: number
  readonly upstreamCpuMs: number
  readonly maxInFlight: Record<string, number>
  /** The upstream calls' latency as Podium recorded it (p50 of the candidates' p50s). */
  readonly callP50Ms: number
  readonly polls: number
}

/** Starts a run, polls it to its end, checks its results, and waits for its traces. */
const timeRun = async (
  podium: Podium,
  jwt: string,
  leaderboard: { readonly id: string; readonly candidateIds: ReadonlyArray<string> },
  upstream: Upstream,
  client: pg.Client
): Promise<Measured> => {
  const before = await upstream.stats()
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const { run } = await json(podium, "POST", `/api/leaderboards/${leaderboard.id}/run`, jwt, {}, 202)
  let polls = 0
  let done: Record<string, any>
  for (;;) {
    await sleep(pollMs)
    polls++
    done = (await json(podium, "GET", `/api/leaderboards/${leaderboard.id}/runs/${run.id}`, jwt, undefined, 200)).run
    if (done["status"] !== "queued" && done["status"] !== "running") break
  }
  const seenMs = performance.now() - t0
  const cpu1 = process.cpuUsage()
  const cells = rows * candidates
  for (;;) {
    const { rows: [{ n }] } = await client.query("SELECT count(*)::int AS n FROM traces WHERE run_id = $1", [run.id])
    if (n >= cells) break
    await sleep(tracePollMs)
  }
  const cpu2 = process.cpuUsage()
  const after = await upstream.stats()

  const problems: Array<string> = []
  if (done["status"] !== "succeeded") problems.push(`status ${done["status"]} (${done["error"]})`)
  const { completed, failed, total } = done["progress"]
  if (total !== cells || completed !== cells || failed !== 0) problems.push(`progress ${JSON.stringify(done["progress"])}`)
  for (const [k, id] of leaderboard.candidateIds.entries()) {
    const result = (done["results"] as Array<Record<string, any>>).find((r) => r["leaderboard_model_id"] === id)
    if (result?.["correct"] !== correctOf(k) || result?.["total"] !== rows) {
      problems.push(`m${k}: ${result?.["correct"]}/${result?.["total"]} correct, expected ${correctOf(k)}/${rows}`)
    }
  }
  if (after.calls - before.calls !== cells) problems.push(`${after.calls - before.calls} upstream calls for ${cells} cells`)
  if (problems.length > 0) throw new Error(`run ${run.id} is not what was asked: ${problems.join("; ")}`)

  const at = (field: string) => Date.parse(done[field] as string)
  return {
    wallMs: at("finished_at") - at("created_at"),
    seenMs,
    prepareMs: at("started_at") - at("created_at"),
    cpuMs: cpuMs(cpu0, cpu1),
    cpuWithTracesMs: cpuMs(cpu0, cpu2),
    upstreamCalls: after.calls - before.calls,
    upstreamConnections: after.connections - before.connections,
    upstreamCpuMs: cpuMs(before.cpu, after.cpu),
    maxInFlight: after.maxInFlight,
    callP50Ms: median((done["results"] as Array<Record<string, any>>).map((r) => r["latency_ms_p50"] as number)),
    polls
  }
}

/** A level's numbers: medians over its timed runs, and each run's. */
const summarise = (concurrency: number, runs: ReadonlyArray<Measured>, idleCpuMsPerSecond: number) => {
  const cells = rows * candidates
  // every candidate asks its rows side by side, `concurrency` at a time: 4 x concurrency calls in flight
  const inFlight = concurrency * candidates
  const idealMs = (cells * upstreamDelayMs) / inFlight
  const wallMs = median(runs.map((r) => r.wallMs))
  const cpuPerCellMs = median(runs.map((r) => r.cpuWithTracesMs)) / cells
  return {
    concurrency,
    inFlight,
    rows,
    candidates,
    cells,
    idealMs,
    wallMs,
    seenMs: median(runs.map((r) => r.seenMs)),
    prepareMs: median(runs.map((r) => r.prepareMs)),
    efficiency: idealMs / wallMs,
    cpuPerCellMs,
    cpuPerCellToEndMs: median(runs.map((r) => r.cpuMs)) / cells,
    cpuShareOfOneCore: median(runs.map((r) => r.cpuWithTracesMs)) / wallMs,
    upstreamCpuPerCellMs: median(runs.map((r) => r.upstreamCpuMs)) / cells,
    callP50Ms: median(runs.map((r) => r.callP50Ms)),
    idleCpuMsPerSecond,
    runs
  }
}

const pct = (x: number) => `${(x * 100).toFixed(0)}%`

export const RunBench: SelfRunningBenchmark = {
  name: "run",
  description: `an exact run of ${rows} rows x ${candidates} candidates against a loopback upstream answering in ` +
    `${upstreamDelayMs} ms, at RUN_CONCURRENCY ${concurrencies.join(" and ")}`,
  scenarios: async () => {
    throw new Error("the run benchmark runs itself (RunBench.run)")
  },
  run: async (databases) => {
    const upstream = await startUpstream()
    const databaseUrl = await databases.create()
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    try {
      const results: Array<ScenarioResult> = []
      const levels: Array<ReturnType<typeof summarise>> = []
      for (const [index, concurrency] of concurrencies.entries()) {
        const podium = await startBenchPodium(databaseUrl, { RUN_CONCURRENCY: String(concurrency) })
        try {
          const jwt = await benchSession("bench-runs")
          const leaderboard = await prepare(podium, jwt, upstream.url)
          // a forced GC just before the timed runs made the first of them cost 20-40% more CPU
          const memoryBefore = memory()
          for (let i = 0; i < warmupRuns(index); i++) {
            process.stderr.write(`  run / RUN_CONCURRENCY ${concurrency}: untimed run ${i + 1} of ${warmupRuns(index)}\n`)
            await timeRun(podium, jwt, leaderboard, upstream, client)
          }
          await sleep(500)
          // what the idle server spends (job polling, timers), for scale
          const idle0 = process.cpuUsage()
          await sleep(2000)
          const idleCpuMsPerSecond = cpuMs(idle0, process.cpuUsage()) / 2
          podium.logs.reset()
          const measured: Array<Measured> = []
          for (let i = 0; i < timedRuns; i++) {
            process.stderr.write(`  run / RUN_CONCURRENCY ${concurrency}: timed run ${i + 1} of ${timedRuns}\n`)
            measured.push(await timeRun(podium, jwt, leaderboard, upstream, client))
            await sleep(500)
          }
          const level = summarise(concurrency, measured, idleCpuMsPerSecond)
          levels.push(level)
          results.push({
            benchmark: "run",
            scenario: `${rows} rows x ${candidates} candidates, RUN_CONCURRENCY ${concurrency}`,
            runs: [],
            serverLogs: podium.logs.tally(),
            memoryBefore,
            memoryAfter: memory(),
            callsPerRequest: {},
            run: level
          } as ScenarioResult)
        } finally {
          await podium.stop()
        }
      }
      // SQL statements and HTTP calls per cell, on a second server with a counting tracer
      const calls = new CallCounter()
      const counting = await startCountingPodium(databaseUrl, { RUN_CONCURRENCY: String(concurrencies[0]) }, calls)
      let counted: ReturnType<CallCounter["perCell"]>
      try {
        const jwt = await benchSession("bench-runs")
        const leaderboard = await prepare(counting, jwt, upstream.url)
        process.stderr.write(`  run / RUN_CONCURRENCY ${concurrencies[0]}: one run on the call-counting server\n`)
        await sleep(500)
        calls.reset()
        await timeRun(counting, jwt, leaderboard, upstream, client)
        counted = calls.perCell(rows * candidates)
      } finally {
        await counting.stop()
      }
      results[0] = {
        ...results[0]!,
        callsPerRequest: Object.fromEntries(counted.map((c) => [c.name, c.perCell])),
        meanCallMs: Object.fromEntries(counted.map((c) => [c.name, c.meanMs]))
      } as ScenarioResult

      const notes = levels.flatMap((l, i) => {
        const first = i === 0
        const wallOk = l.efficiency >= efficiencyTarget
        const cpuOk = l.cpuPerCellMs < cpuPerCellTargetMs
        return [
          `run: ${l.rows} rows x ${l.candidates} candidates = ${l.cells} cells, RUN_CONCURRENCY ${l.concurrency} ` +
          `(${l.inFlight} calls in flight at most), upstream ${upstreamDelayMs} ms; medians of ${l.runs.length} runs`,
          `  wall (created_at -> finished_at): ${l.wallMs.toFixed(0)} ms [${l.runs.map((r) => r.wallMs.toFixed(0)).join(", ")}]; ` +
          `seen by polling: ${l.seenMs.toFixed(0)} ms; dataset fetched and stored in ${l.prepareMs.toFixed(0)} ms`,
          `  ideal (cells x ${upstreamDelayMs} ms / ${l.inFlight} in flight): ${l.idealMs.toFixed(0)} ms; ` +
          `efficiency ideal/wall ${pct(l.efficiency)}` +
          (first ? ` (target >= ${pct(efficiencyTarget)}: ${wallOk ? "met" : "NOT met"})` : "") +
          `; with RUN_CONCURRENCY alone as the concurrency (${l.concurrency}, not ${l.inFlight}) the ideal would be ` +
          `${(l.idealMs * l.candidates).toFixed(0)} ms and ideal/wall ${pct((l.idealMs * l.candidates) / l.wallMs)}`,
          `  Podium CPU per cell: ${l.cpuPerCellMs.toFixed(3)} ms until the traces were written ` +
          `(${l.cpuPerCellToEndMs.toFixed(3)} ms until the run ended) ` +
          (first ? `(target < ${cpuPerCellTargetMs} ms: ${cpuOk ? "met" : "NOT met"})` : "") +
          `; ${pct(l.cpuShareOfOneCore)} of one core over the wall time; idle ${l.idleCpuMsPerSecond.toFixed(1)} ms/s`,
          `  [${l.runs.map((r) => (r.cpuWithTracesMs / l.cells).toFixed(3)).join(", ")}] ms per cell; ` +
          `upstream process ${l.upstreamCpuPerCellMs.toFixed(3)} ms per call, ` +
          `most in flight per candidate ${JSON.stringify(l.runs.at(-1)!.maxInFlight)}, ` +
          `${l.runs.at(-1)!.upstreamConnections} new upstream connections in the last run; ` +
          `upstream call p50 as Podium saw it ${l.callP50Ms.toFixed(1)} ms`
        ]
      }).concat([
        `run: calls per cell (all ${rows * candidates} cells of one run at RUN_CONCURRENCY ${concurrencies[0]}, ` +
        "on a server with a counting tracer), mean duration:",
        ...counted.filter((c) => c.perCell >= 0.001).map((c) =>
          `  ${c.perCell.toFixed(3).padStart(7)}  ${c.meanMs.toFixed(2).padStart(7)} ms  ${c.name}`
        )
      ])
      return { results, notes }
    } finally {
      await client.end()
      await upstream.close()
    }
  }
}
