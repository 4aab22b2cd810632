import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { Worker } from "node:worker_threads"
import { type Benchmark, type Scenario, type ScenarioResult, type Settings, benchSession, startBenchPodium, type Podium } from "./Benchmark.ts"
import type { Databases } from "./Databases.ts"
import { type Figure, figureLine, times } from "./Figures.ts"
import { expectSuccess, hammer, type LoopProbe, mainLoop, type Memory, memory, type Run, type Target } from "./Load.ts"
import { sequential } from "./Sequential.ts"
import { SpanCounter } from "./SpanCounter.ts"
import { webhookCost } from "./WebhookCost.ts"

/** A benchmark that runs itself, for measurements `runBenchmark` cannot express (here: a target that is not Podium). */
export interface SelfRunningBenchmark extends Benchmark {
  readonly run: (databases: Databases, settings: Settings) => Promise<{
    readonly results: ReadonlyArray<ScenarioResult>
    /** Lines printed after the table. */
    readonly notes: ReadonlyArray<string>
  }>
}

/** What the upstream answers to every `POST .../chat/completions`. */
const completion = JSON.stringify({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 }
})

/** Answers the bench's questions from inside a worker: calls and connections so far, its loop's busy time, close. */
const workerControl = `
parentPort.on("message", (message) => {
  if (message === "calls") parentPort.postMessage({ calls, connections })
  if (message === "loop") parentPort.postMessage({ active: performance.eventLoopUtilization().active })
  if (message === "close") {
    server.closeAllConnections()
    server.close(() => parentPort.postMessage({ closed: true }))
  }
})
server.on("connection", () => connections++)
server.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }))
`

/** What the upstream streams to a request with `"stream":true`: `events` content chunks `gapMs` apart, then usage and [DONE]. */
export interface StreamShape {
  readonly events: number
  readonly gapMs: number
}

/** The streamed answer's default shape: a short answer of 20 tokens, 3 ms apart. */
export const defaultStream: StreamShape = { events: 20, gapMs: 3 }

/**
 * The upstream runs in its own worker thread, as a remote provider would run on its own machine:
 * in Podium's thread it would add its own parsing and writing to the event loop being measured.
 * `delayMs` holds each answer back that long (a model's time to answer). A request whose body has
 * `"stream":true` is answered as OpenAI streams (text/event-stream, chat.completion.chunk events):
 * the first chunk with the headers, the next ones `gapMs` apart, the last with finish_reason, then
 * a usage chunk and `data: [DONE]`; a client closing early stops it.
 */
const upstreamSource = `
const { parentPort, workerData } = require("node:worker_threads")
const { createServer } = require("node:http")
const body = Buffer.from(workerData.completion)
const delayMs = workerData.delayMs
const shape = workerData.stream
const chunk = (fields) =>
  "data: " + JSON.stringify(Object.assign({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "m" }, fields)) + "\\n\\n"
const events = []
for (let i = 0; i < shape.events; i++) {
  const delta = i === 0 ? { role: "assistant", content: "t" + i + " " } : { content: "t" + i + " " }
  events.push(Buffer.from(chunk({ choices: [{ index: 0, delta, finish_reason: i === shape.events - 1 ? "stop" : null }] })))
}
const usage = { prompt_tokens: 5, completion_tokens: shape.events, total_tokens: 5 + shape.events }
const tail = Buffer.from(chunk({ choices: [], usage }) + "data: [DONE]\\n\\n")
const streamed = Buffer.from('"stream":true')
const stream = (response) => {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  let sent = 0
  let timer
  const next = () => {
    response.write(events[sent++])
    if (sent < events.length) timer = setTimeout(next, shape.gapMs)
    else response.end(tail)
  }
  response.on("close", () => clearTimeout(timer))
  next()
}
let calls = 0
let connections = 0
const server = createServer((request, response) => {
  const found = request.method === "POST" && request.url.endsWith("/chat/completions")
  const chunks = []
  request.on("data", (chunk) => chunks.push(chunk))
  request.on("end", () => {
    if (found) calls++
    if (found && Buffer.concat(chunks).includes(streamed)) return stream(response)
    const answer = () => {
      response.writeHead(found ? 200 : 404, { "content-type": "application/json", "content-length": found ? body.length : 2 })
      response.end(found ? body : "{}")
    }
    if (delayMs > 0) setTimeout(answer, delayMs)
    else answer()
  })
})
${workerControl}`

/**
 * The in-repo reference for a proxy's floor on this machine: node:http in, a keep-alive
 * http.Agent out, no authentication, database or validation. It buffers the request, forwards it,
 * buffers the answer, parses it for \`usage\` (what a recorder must read) and returns its bytes. A
 * streamed answer (text/event-stream) it passes through chunk by chunk as it comes, keeping the
 * stream's last bytes to read `usage` from at its end; a client closing early closes the upstream's.
 */
const bareProxySource = `
const { parentPort, workerData } = require("node:worker_threads")
const { Agent, createServer, request: send } = require("node:http")
const upstream = new URL(workerData.upstreamUrl)
const agent = new Agent({ keepAlive: true, maxSockets: 512, maxFreeSockets: 512 })
let calls = 0
let connections = 0
let tokens = 0
const server = createServer((request, response) => {
  const chunks = []
  request.on("data", (chunk) => chunks.push(chunk))
  request.on("end", () => {
    calls++
    const body = Buffer.concat(chunks)
    const out = send({
      host: upstream.hostname, port: upstream.port, path: "/chat/completions", method: "POST", agent,
      headers: { "content-type": "application/json", "content-length": body.length }
    }, (answer) => {
      if ((answer.headers["content-type"] || "").startsWith("text/event-stream")) {
        response.writeHead(answer.statusCode ?? 502, { "content-type": "text/event-stream", "cache-control": "no-cache" })
        response.on("close", () => { if (!answer.complete) answer.destroy() })
        let last = ""
        answer.on("data", (chunk) => {
          response.write(chunk)
          last = (last + chunk.toString("utf8")).slice(-4096)
        })
        answer.on("end", () => {
          const line = last.split("\\n").find((line) => line.startsWith("data: {") && line.includes('"usage"'))
          try { tokens += JSON.parse(line.slice(6)).usage?.total_tokens ?? 0 } catch {}
          response.end()
        })
        return
      }
      const parts = []
      answer.on("data", (chunk) => parts.push(chunk))
      answer.on("end", () => {
        const bytes = Buffer.concat(parts)
        try { tokens += JSON.parse(bytes.toString("utf8")).usage?.total_tokens ?? 0 } catch {}
        response.writeHead(answer.statusCode ?? 502, { "content-type": "application/json", "content-length": bytes.length })
        response.end(bytes)
      })
    })
    out.on("error", () => { response.writeHead(502); response.end() })
    out.end(body)
  })
})
${workerControl}`

interface Server {
  readonly url: string
  /** Requests answered so far, and TCP connections accepted. */
  readonly calls: () => Promise<{ readonly calls: number; readonly connections: number }>
  /** Its event loop's busy time so far (ms). */
  readonly loop: LoopProbe
  readonly close: () => Promise<void>
}

const startWorker = async (source: string, workerData: Record<string, unknown>): Promise<Server> => {
  const worker = new Worker(source, { eval: true, workerData })
  const ask = <A>(message: string | undefined, pick: (reply: Record<string, unknown>) => A | undefined) =>
    new Promise<A>((resolve, reject) => {
      const onMessage = (reply: Record<string, unknown>) => {
        const value = pick(reply)
        if (value === undefined) return
        worker.off("message", onMessage)
        worker.off("error", reject)
        resolve(value)
      }
      worker.on("message", onMessage)
      worker.once("error", reject)
      if (message !== undefined) worker.postMessage(message)
    })
  const port = await ask(undefined, (reply) => reply["port"] as number | undefined)
  return {
    url: `http://127.0.0.1:${port}`,
    calls: () =>
      ask("calls", (reply) =>
        reply["calls"] === undefined
          ? undefined
          : { calls: reply["calls"] as number, connections: reply["connections"] as number }),
    loop: () => ask("loop", (reply) => reply["active"] as number | undefined),
    close: async () => {
      await ask("close", (reply) => reply["closed"] as boolean | undefined)
      await worker.terminate()
    }
  }
}

/** A loopback OpenAI-compatible upstream answering `completion`, after `delayMs` if given, or streaming `stream`. */
export const startUpstream = (delayMs = 0, stream: StreamShape = defaultStream): Promise<Server> =>
  startWorker(upstreamSource, { completion, delayMs, stream })

/** The bare proxy in front of `upstreamUrl`, in a worker of its own. */
export const startBareProxy = (upstreamUrl: string): Promise<Server> => startWorker(bareProxySource, { upstreamUrl })

const countTraces = (databaseUrl: string): Promise<number> =>
  Effect.runPromise(
    PgClient.makeClient({ url: Redacted.make(databaseUrl) }).pipe(
      Effect.flatMap((sql) => sql<{ count: string }>`SELECT count(*)::text AS count FROM traces`),
      Effect.map((rows) => Number(rows[0]!.count)),
      Effect.scoped,
      Effect.provide(Reactivity.layer)
    )
  )

/** The trace count once it has stopped changing (the servers are stopped by then, so it should not). */
export const settledTraceCount = async (databaseUrl: string): Promise<number> => {
  let last = await countTraces(databaseUrl)
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    const now = await countTraces(databaseUrl)
    if (now === last) return now
    last = now
  }
}

const ok = (run: Run): number =>
  Object.entries(run.statusCodes).reduce((sum, [code, count]) => (code.startsWith("2") ? sum + count : sum), 0)

export const settle = () => new Promise((resolve) => setTimeout(resolve, 250))

/** The slow-upstream comparison: a model's time to answer, at 100 connections (the proxies' share of direct req/s). */
const slowUpstreamMs = 50
const slowConnections = 100
/** The bare proxy and Podium take turns this many times under the slow upstream; the figure is their medians. */
const slowReps = 3

/** The middle value (the mean of the two middle ones for an even count). */
export const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** Warms up, then keeps `slowConnections` connections busy for the bench's seconds; answers the run and the 2xx seen. */
const underSlowUpstream = async (title: string, url: string, target: Target, settings: Settings, loop: LoopProbe) => {
  await expectSuccess(url, target)
  const warmup = await hammer(url, target, slowConnections, settings.warmupSeconds, loop)
  await settle()
  process.stderr.write(`  inference / ${title}, upstream after ${slowUpstreamMs} ms: ${slowConnections} connections for ${settings.seconds} s\n`)
  const run = await hammer(url, target, slowConnections, settings.seconds, loop)
  await settle()
  return { run, succeeded: 1 + ok(warmup) + ok(run) }
}

/** One connection, one request at a time, timed to the microsecond: the added-latency figure. */
export const preciseCount = 3000

/** As `runBenchmark`'s timing, but against any URL, and returning the 2xx answers of the warm-up too. */
export const time = async (
  title: string,
  url: string,
  target: Target,
  settings: Settings,
  podium?: Podium,
  loop: LoopProbe = mainLoop
) => {
  await expectSuccess(url, target)
  const memoryBefore = memory()
  const warmup = await hammer(url, target, 10, settings.warmupSeconds, loop)
  await settle()
  podium?.logs.reset()
  const runs: Array<Run> = []
  for (const connections of settings.connections) {
    process.stderr.write(`  ${title}: ${connections} connection(s) for ${settings.seconds} s\n`)
    runs.push(await hammer(url, target, connections, settings.seconds, loop))
    await settle()
  }
  process.stderr.write(`  ${title}: ${preciseCount} sequential requests timed to the microsecond\n`)
  const precise = await sequential(url, target, { warmup: 200, count: preciseCount })
  return {
    runs,
    serverLogs: podium?.logs.tally() ?? {},
    memoryBefore,
    memoryAfter: memory(),
    precise,
    succeeded: 1 + ok(warmup) + runs.reduce((sum, run) => sum + ok(run), 0) + precise.warmup + precise.succeeded
  }
}

export const json = async (podium: Podium, method: string, path: string, token: string, body: unknown, status: number) => {
  const response = await fetch(`${podium.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const text = await response.text()
  if (response.status !== status) throw new Error(`${method} ${path} answered ${response.status}: ${text}`)
  return JSON.parse(text) as Record<string, any>
}

/** A leaderboard serving a Custom candidate at `upstreamUrl`, and the secret of an API token that may call it. */
export const prepareLeaderboard = async (podium: Podium, upstreamUrl: string) => {
  const jwt = await benchSession("bench-inference")
  const { secret } = await json(podium, "POST", "/api/tokens", jwt, {
    name: "bench",
    scopes: ["leaderboards:inference"]
  }, 201)
  const id = (await json(podium, "POST", "/api/leaderboards", jwt, { name: "bench", dataset_type: "PUSH" }, 201))
    .leaderboard.id as string
  const candidate = (await json(podium, "POST", `/api/leaderboards/${id}/models`, jwt, {
    name: "up",
    platform: "Custom",
    url: upstreamUrl,
    auth_type: "none"
  }, 201)).model.id as string
  await json(podium, "PATCH", `/api/leaderboards/${id}`, jwt, {
    chosen_model_strategy: "manual",
    chosen_leaderboard_model_id: candidate
  }, 200)
  return { id, secret: secret as string }
}

const prepare = async (podium: Podium, upstreamUrl: string): Promise<Scenario> => {
  const { id, secret } = await prepareLeaderboard(podium, upstreamUrl)
  return {
    name: "Podium POST /v1/leaderboard/{id}/inference",
    target: {
      method: "POST",
      path: `/v1/leaderboard/${id}/inference`,
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({ input: "hi" })
    }
  }
}

export const directTarget: Target = {
  method: "POST",
  path: "/chat/completions",
  headers: { "content-type": "application/json" },
  body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] })
}

export const InferenceBench: SelfRunningBenchmark = {
  name: "inference",
  description: "POST /v1/leaderboard/{id}/inference against a loopback Custom upstream, that upstream directly and the bare " +
    "proxy; model inference's CPU per call with the webhook on against logs alone",
  scenarios: async () => {
    throw new Error("the inference benchmark runs itself (InferenceBench.run)")
  },
  run: async (databases, settings) => {
    const upstream = await startUpstream()
    const bare = await startBareProxy(upstream.url)
    const slowUpstream = await startUpstream(slowUpstreamMs)
    // the bare proxy's own slow upstream (alike), so that Podium's upstream counts only Podium's calls while they take turns
    const slowBareUpstream = await startUpstream(slowUpstreamMs)
    const slowBare = await startBareProxy(slowBareUpstream.url)
    try {
      const env = { ALLOW_PRIVATE_NETWORK_TARGETS: "true" }
      const direct = await time("inference / direct upstream", upstream.url, directTarget, settings, undefined, upstream.loop)
      const bareTimed = await time("inference / bare proxy", bare.url, directTarget, settings, undefined, bare.loop)
      const slowDirect = await underSlowUpstream("direct upstream", slowUpstream.url, directTarget, settings, slowUpstream.loop)
      const databaseUrl = await databases.create()

      const beforePodium = await upstream.calls()
      const beforeSlow = await slowUpstream.calls()
      const timedPodium = await startBenchPodium(databaseUrl, env)
      let scenario: Scenario
      let timed: Awaited<ReturnType<typeof time>>
      const slowBareRuns: Array<Run> = []
      const slowPodiumRuns: Array<Awaited<ReturnType<typeof underSlowUpstream>>> = []
      try {
        scenario = await prepare(timedPodium, upstream.url)
        timed = await time(`inference / ${scenario.name}`, timedPodium.url, scenario.target, settings, timedPodium)
        const slowScenario = await prepare(timedPodium, slowUpstream.url)
        // in turns, so that both see the machine alike (other work on it comes and goes)
        for (let rep = 1; rep <= slowReps; rep++) {
          const turn = `(turn ${rep} of ${slowReps})`
          slowBareRuns.push((await underSlowUpstream(`bare proxy ${turn}`, slowBare.url, directTarget, settings, slowBare.loop)).run)
          slowPodiumRuns.push(await underSlowUpstream(`${slowScenario.name} ${turn}`, timedPodium.url, slowScenario.target, settings, mainLoop))
        }
      } finally {
        await timedPodium.stop() // flushes the trace writer's queue
      }
      const tracesAfterTimed = await settledTraceCount(databaseUrl)
      const afterPodium = await upstream.calls()
      const afterSlow = await slowUpstream.calls()
      const upstreamCallsTimed = afterPodium.calls - beforePodium.calls + afterSlow.calls - beforeSlow.calls
      const upstreamConnectionsTimed = afterPodium.connections - beforePodium.connections + afterSlow.connections -
        beforeSlow.connections

      const calls = new SpanCounter()
      const countingPodium = await startBenchPodium(databaseUrl, env, calls)
      try {
        for (let i = 0; i < settings.countedRequests; i++) await expectSuccess(countingPodium.url, scenario.target)
      } finally {
        await countingPodium.stop()
      }
      const tracesAfterCounted = await settledTraceCount(databaseUrl)
      const callsPerRequest = calls.perRequest()

      const sequentialTraces = tracesAfterCounted - tracesAfterTimed
      const slowPodium2xx = slowPodiumRuns.reduce((sum, { succeeded }) => sum + succeeded, 0)
      const traces = {
        timedServer2xx: timed.succeeded + slowPodium2xx,
        timedServerTraces: tracesAfterTimed,
        timedServerUpstreamCalls: upstreamCallsTimed,
        timedServerUpstreamConnections: upstreamConnectionsTimed,
        sequential2xx: settings.countedRequests,
        sequentialTraces,
        total2xx: timed.succeeded + slowPodium2xx + settings.countedRequests,
        totalTraces: tracesAfterCounted
      }
      const addedLatency = settings.connections.map((connections, i) => {
        const d = direct.runs[i]!
        const p = timed.runs[i]!
        return { connections, addedP50Ms: p.p50Ms - d.p50Ms, addedMeanMs: p.meanMs - d.meanMs }
      })
      const { succeeded: _d, ...directMeasured } = direct
      const { succeeded: _b, ...bareMeasured } = bareTimed
      const { succeeded: _t, ...podiumMeasured } = timed
      // memory is the bench process's (Podium's when it runs in it): the reference's own run measured it alike
      const slowRun = (what: string, run: Run, alike: { readonly memoryBefore: Memory; readonly memoryAfter: Memory }) => ({
        benchmark: "inference",
        scenario: `${what}, upstream answering after ${slowUpstreamMs} ms`,
        runs: [run],
        serverLogs: {},
        memoryBefore: alike.memoryBefore,
        memoryAfter: alike.memoryAfter,
        callsPerRequest: {}
      })
      const results: Array<ScenarioResult> = [
        { benchmark: "inference", scenario: "direct upstream POST /chat/completions", ...directMeasured, callsPerRequest: {} },
        { benchmark: "inference", scenario: "bare proxy (node:http, keep-alive agent)", ...bareMeasured, callsPerRequest: {} },
        { benchmark: "inference", scenario: scenario.name, ...podiumMeasured, callsPerRequest, addedLatency, traces } as
          ScenarioResult,
        slowRun("direct upstream", slowDirect.run, direct),
        ...slowBareRuns.flatMap((run, i) => [
          slowRun(`bare proxy (turn ${i + 1})`, run, bareTimed),
          slowRun(`Podium (turn ${i + 1})`, slowPodiumRuns[i]!.run, timed)
        ])
      ]
      // Under load, autocannon ends each level with requests in flight and drops their answers: those
      // were served (and traced) but are not among its 2xx. The sequential requests have no such edge.
      const abandonedAtMost = settings.connections.reduce((sum, n) => sum + n, 10) + 2 * slowReps * slowConnections
      const excess = traces.totalTraces - traces.total2xx
      const verdict = excess === 0
        ? "equal: every trace persisted"
        : excess > 0 && excess <= abandonedAtMost && traces.sequentialTraces === traces.sequential2xx
        ? `${excess} more traces than 2xx answers seen, all from the timed server, where the load ` +
          `generator abandoned up to ${abandonedAtMost} requests in flight (consistent with every 2xx being traced)`
        : `MISMATCH: ${excess} traces more than 2xx answers`
      const d = direct.precise
      const p = timed.precise
      const b = bareTimed.precise
      const ratio = times
      const slowBareRps = median(slowBareRuns.map((run) => run.rps))
      const slowPodiumRps = median(slowPodiumRuns.map(({ run }) => run.rps))
      const turns = (runs: ReadonlyArray<Run>) => runs.map((run) => run.rps.toFixed(0)).join(", ")
      const fast = settings.connections.indexOf(100)
      const webhook = await webhookCost(databases, settings, upstream.url)
      const figures: Array<Figure> = [
        {
          name: `inference req/s, upstream answering after ${slowUpstreamMs} ms, ${slowConnections} connections`,
          podium: `${slowPodiumRps.toFixed(0)} req/s`,
          reference: `bare proxy ${slowBareRps.toFixed(0)} req/s`,
          comparison: ratio(slowPodiumRps, slowBareRps),
          target: ">= 0.9x",
          met: slowPodiumRps >= 0.9 * slowBareRps,
          how: `medians of ${slowReps} turns each, Podium ${turns(slowPodiumRuns.map(({ run }) => run))}, bare proxy ` +
            `${turns(slowBareRuns)}; direct ${slowDirect.run.rps.toFixed(0)}`
        },
        ...(fast === -1 ? [] : [{
          name: "inference req/s, fast upstream, 100 connections, every call traced",
          podium: `${timed.runs[fast]!.rps.toFixed(0)} req/s`,
          reference: `bare proxy ${bareTimed.runs[fast]!.rps.toFixed(0)} req/s`,
          comparison: ratio(timed.runs[fast]!.rps, bareTimed.runs[fast]!.rps),
          target: ">= 0.4x, every call traced",
          met: timed.runs[fast]!.rps >= 0.4 * bareTimed.runs[fast]!.rps && !verdict.startsWith("MISMATCH"),
          how: `one run of ${settings.seconds} s; loop us/req Podium ${timed.runs[fast]!.loopUsPerRequest?.toFixed(0)}, bare proxy ` +
            `${bareTimed.runs[fast]!.loopUsPerRequest?.toFixed(0)}; traces ${traces.totalTraces} for ${traces.total2xx} 2xx seen ` +
            `(${excess === 0 ? "equal" : verdict.startsWith("MISMATCH") ? "MISMATCH" : `${excess} more, within the ${abandonedAtMost} abandoned in flight`})`
        }]),
        webhook.figure
      ]
      const notes = [
        "inference: Podium against the in-repo references (same run)",
        ...settings.connections.map((connections, i) => {
          const [pod, bar, dir] = [timed.runs[i]!, bareTimed.runs[i]!, direct.runs[i]!]
          return `  ${String(connections).padStart(3)} connection(s): req/s Podium ${pod.rps.toFixed(0)}, bare proxy ` +
            `${bar.rps.toFixed(0)} (${ratio(pod.rps, bar.rps)}), direct ${dir.rps.toFixed(0)}; loop µs/req Podium ` +
            `${pod.loopUsPerRequest?.toFixed(0)}, bare proxy ${bar.loopUsPerRequest?.toFixed(0)} (target ~400 µs of server CPU per call)`
        }),
        `  one connection, added p50: Podium +${p.p50Us - d.p50Us} us, bare proxy +${b.p50Us - d.p50Us} us`,
        `  upstream answering after ${slowUpstreamMs} ms, ${slowConnections} connections: direct ${slowDirect.run.rps.toFixed(0)} req/s, ` +
        `bare proxy ${slowBareRps.toFixed(0)}, Podium ${slowPodiumRps.toFixed(0)} = ` +
        `${ratio(slowPodiumRps, slowBareRps)} the bare proxy (target 0.9x; medians of ${slowReps} turns)`,
        `inference: one connection, ${preciseCount} requests one at a time, timed to the microsecond`,
        `  direct upstream: p50 ${d.p50Us} us, p90 ${d.p90Us} us, p99 ${d.p99Us} us, mean ${d.meanUs} us`,
        `  Podium:          p50 ${p.p50Us} us, p90 ${p.p90Us} us, p99 ${p.p99Us} us, mean ${p.meanUs} us`,
        `  added:           p50 +${p.p50Us - d.p50Us} us, mean +${p.meanUs - d.meanUs} us (target: p50 under 1000 us)`,
        "inference: added latency under load (Podium - direct upstream, autocannon, whole ms)",
        ...addedLatency.map(({ addedMeanMs, addedP50Ms, connections }) =>
          `  ${String(connections).padStart(3)} connection(s): p50 +${addedP50Ms} ms, mean +${addedMeanMs.toFixed(2)} ms`
        ),
        "inference: traces written (SELECT count(*) FROM traces after each server stopped)",
        `  timed server: ${traces.timedServer2xx} 2xx answers seen, ${traces.timedServerTraces} traces, ` +
        `${traces.timedServerUpstreamCalls} upstream calls over ${traces.timedServerUpstreamConnections} TCP connections`,
        `  sequential (call-counting server): ${traces.sequential2xx} 2xx answers, ${traces.sequentialTraces} traces`,
        `  total: ${traces.total2xx} 2xx answers, ${traces.totalTraces} traces: ${verdict}`,
        "inference: issue 30's figures",
        ...figures.map(figureLine)
      ]
      return { results, notes }
    } finally {
      await slowBare.close()
      await slowBareUpstream.close()
      await slowUpstream.close()
      await bare.close()
      await upstream.close()
    }
  }
}
