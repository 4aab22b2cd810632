import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { Worker } from "node:worker_threads"
import { type Benchmark, type Scenario, type ScenarioResult, type Settings, benchSession, startBenchPodium, type Podium } from "./Benchmark.ts"
import type { Databases } from "./Databases.ts"
import { expectSuccess, hammer, memory, type Run, type Target } from "./Load.ts"
import { sequential } from "./Sequential.ts"
import { SpanCounter } from "./SpanCounter.ts"

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

/**
 * The upstream runs in its own worker thread, as a remote provider would run on its own machine:
 * in Podium's thread it would add its own parsing and writing to the event loop being measured.
 */
const upstreamSource = `
const { parentPort, workerData } = require("node:worker_threads")
const { createServer } = require("node:http")
const body = Buffer.from(workerData.completion)
let calls = 0
let connections = 0
const server = createServer((request, response) => {
  const found = request.method === "POST" && request.url.endsWith("/chat/completions")
  request.resume()
  request.on("end", () => {
    if (found) calls++
    response.writeHead(found ? 200 : 404, { "content-type": "application/json", "content-length": found ? body.length : 2 })
    response.end(found ? body : "{}")
  })
})
server.on("connection", () => connections++)
server.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }))
parentPort.on("message", (message) => {
  if (message === "calls") parentPort.postMessage({ calls, connections })
  if (message === "close") {
    server.closeAllConnections()
    server.close(() => parentPort.postMessage({ closed: true }))
  }
})
`

interface Upstream {
  readonly url: string
  /** POST .../chat/completions answered so far, and TCP connections accepted. */
  readonly calls: () => Promise<{ readonly calls: number; readonly connections: number }>
  readonly close: () => Promise<void>
}

export const startUpstream = async (): Promise<Upstream> => {
  const worker = new Worker(upstreamSource, { eval: true, workerData: { completion } })
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
    close: async () => {
      await ask("close", (reply) => reply["closed"] as boolean | undefined)
      await worker.terminate()
    }
  }
}

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
const settledTraceCount = async (databaseUrl: string): Promise<number> => {
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

/** One connection, one request at a time, timed to the microsecond: the added-latency figure. */
export const preciseCount = 3000

/** As `runBenchmark`'s timing, but against any URL, and returning the 2xx answers of the warm-up too. */
export const time = async (title: string, url: string, target: Target, settings: Settings, podium?: Podium) => {
  await expectSuccess(url, target)
  const memoryBefore = memory()
  const warmup = await hammer(url, target, 10, settings.warmupSeconds)
  await settle()
  podium?.logs.reset()
  const runs: Array<Run> = []
  for (const connections of settings.connections) {
    process.stderr.write(`  ${title}: ${connections} connection(s) for ${settings.seconds} s\n`)
    runs.push(await hammer(url, target, connections, settings.seconds))
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

/** A leaderboard serving a Custom candidate at `upstreamUrl`, and an API token that may call it. */
const prepare = async (podium: Podium, upstreamUrl: string): Promise<Scenario> => {
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
  description: "POST /v1/leaderboard/{id}/inference against a loopback Custom upstream, and that upstream directly",
  scenarios: async () => {
    throw new Error("the inference benchmark runs itself (InferenceBench.run)")
  },
  run: async (databases, settings) => {
    const upstream = await startUpstream()
    try {
      const env = { ALLOW_PRIVATE_NETWORK_TARGETS: "true" }
      const direct = await time("inference / direct upstream", upstream.url, directTarget, settings)
      const databaseUrl = await databases.create()

      const beforePodium = await upstream.calls()
      const timedPodium = await startBenchPodium(databaseUrl, env)
      let scenario: Scenario
      let timed: Awaited<ReturnType<typeof time>>
      try {
        scenario = await prepare(timedPodium, upstream.url)
        timed = await time(`inference / ${scenario.name}`, timedPodium.url, scenario.target, settings, timedPodium)
      } finally {
        await timedPodium.stop() // flushes the trace writer's queue
      }
      const tracesAfterTimed = await settledTraceCount(databaseUrl)
      const afterPodium = await upstream.calls()
      const upstreamCallsTimed = afterPodium.calls - beforePodium.calls
      const upstreamConnectionsTimed = afterPodium.connections - beforePodium.connections

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
      const traces = {
        timedServer2xx: timed.succeeded,
        timedServerTraces: tracesAfterTimed,
        timedServerUpstreamCalls: upstreamCallsTimed,
        timedServerUpstreamConnections: upstreamConnectionsTimed,
        sequential2xx: settings.countedRequests,
        sequentialTraces,
        total2xx: timed.succeeded + settings.countedRequests,
        totalTraces: tracesAfterCounted
      }
      const addedLatency = settings.connections.map((connections, i) => {
        const d = direct.runs[i]!
        const p = timed.runs[i]!
        return { connections, addedP50Ms: p.p50Ms - d.p50Ms, addedMeanMs: p.meanMs - d.meanMs }
      })
      const { succeeded: _d, ...directMeasured } = direct
      const { succeeded: _t, ...podiumMeasured } = timed
      const results: Array<ScenarioResult> = [
        { benchmark: "inference", scenario: "direct upstream POST /chat/completions", ...directMeasured, callsPerRequest: {} },
        { benchmark: "inference", scenario: scenario.name, ...podiumMeasured, callsPerRequest, addedLatency, traces } as
          ScenarioResult
      ]
      // Under load, autocannon ends each level with requests in flight and drops their answers: those
      // were served (and traced) but are not among its 2xx. The sequential requests have no such edge.
      const abandonedAtMost = settings.connections.reduce((sum, n) => sum + n, 10)
      const excess = traces.totalTraces - traces.total2xx
      const verdict = excess === 0
        ? "equal: every trace persisted"
        : excess > 0 && excess <= abandonedAtMost && traces.sequentialTraces === traces.sequential2xx
        ? `${excess} more traces than 2xx answers seen, all from the timed server, where the load ` +
          `generator abandoned up to ${abandonedAtMost} requests in flight (consistent with every 2xx being traced)`
        : `MISMATCH: ${excess} traces more than 2xx answers`
      const d = direct.precise
      const p = timed.precise
      const notes = [
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
        `  total: ${traces.total2xx} 2xx answers, ${traces.totalTraces} traces: ${verdict}`
      ]
      return { results, notes }
    } finally {
      await upstream.close()
    }
  }
}
