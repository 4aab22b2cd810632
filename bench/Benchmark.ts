import type { Databases } from "./Databases.ts"
import { expectSuccess, hammer, type Memory, memory, type Run, type Target } from "./Load.ts"
import { Layer, References } from "effect"
import { session, startPodium } from "../test/support/Podium.ts"
import { LogTally } from "./LogTally.ts"
import { SpanCounter } from "./SpanCounter.ts"

/** Podium as the tests start it, with its log tallied: reset `logs` before a measurement. */
export interface Podium extends Awaited<ReturnType<typeof startPodium>> {
  readonly logs: LogTally
}

/** With `calls`, its tracer counts outbound calls per request (and slows requests down a little). */
export const startBenchPodium = async (
  databaseUrl: string,
  env: Record<string, string> = {},
  calls?: SpanCounter
): Promise<Podium> => {
  const logs = new LogTally(calls === undefined ? "server" : "call-counting server")
  const podium = await startPodium({ LOG_LEVEL: "Warn", ...env, DATABASE_URL: databaseUrl }, {
    logging: Layer.mergeAll(logs.layer, Layer.succeed(References.MinimumLogLevel, "Warn")),
    tracing: calls?.layer
  })
  return { ...podium, logs }
}

/** A session JWT with a verified email, valid for the longest run. */
export const benchSession = (subject: string) => session(subject, { emailVerified: true, expiresIn: "4h" })

export interface Settings {
  /** Per load level; `BENCH_SECONDS`. */
  readonly seconds: number
  readonly connections: ReadonlyArray<number>
  /** Load before measuring, not recorded, so the first level does not pay for JIT and pool warm-up. */
  readonly warmupSeconds: number
  /** Sequential requests per scenario on the call-counting server. */
  readonly countedRequests: number
}

export interface Scenario {
  readonly name: string
  readonly target: Target
}

/** What a benchmark starts beside Podium (loopback upstreams), and the environment pointing Podium at it. */
export interface Upstreams {
  readonly env: Record<string, string>
  readonly stop: () => Promise<void>
}

export interface Benchmark {
  readonly name: string
  readonly description: string
  readonly upstreams?: () => Promise<Upstreams>
  /**
   * What to send, prepared through the running server (sign-ins, tokens). Targets are reused on a
   * second server over the same database, so what they rely on must live in the database.
   */
  readonly scenarios: (podium: Podium) => Promise<ReadonlyArray<Scenario>>
}

export interface ScenarioResult {
  readonly benchmark: string
  readonly scenario: string
  readonly runs: ReadonlyArray<Run>
  /** Server log lines at Warn and above during the timed runs, by kind. */
  readonly serverLogs: Record<string, number>
  readonly memoryBefore: Memory
  readonly memoryAfter: Memory
  /** Outbound calls per request (SQL statements, HTTP requests), counted on a separate server. */
  readonly callsPerRequest: Record<string, number>
}

const noUpstreams: Upstreams = { env: {}, stop: async () => {} }

/**
 * Times every scenario on one server, then counts its calls per request on a second server over
 * the same database: counting needs a tracer, and a tracer changes the path every request takes.
 */
export const runBenchmark = async (
  benchmark: Benchmark,
  databases: Databases,
  settings: Settings
): Promise<ReadonlyArray<ScenarioResult>> => {
  const upstreams = await (benchmark.upstreams?.() ?? noUpstreams)
  try {
    const databaseUrl = await databases.create()
    const timed = await withPodium(startBenchPodium(databaseUrl, upstreams.env), async (podium) => {
      const scenarios = await benchmark.scenarios(podium)
      const results = []
      for (const scenario of scenarios) {
        results.push({ scenario, ...await time(`${benchmark.name} / ${scenario.name}`, podium, scenario.target, settings) })
      }
      return results
    })
    const calls = new SpanCounter()
    return await withPodium(startBenchPodium(databaseUrl, upstreams.env, calls), async (podium) => {
      const results: Array<ScenarioResult> = []
      for (const { scenario, ...measured } of timed) {
        calls.reset()
        for (let i = 0; i < settings.countedRequests; i++) await expectSuccess(podium.url, scenario.target)
        results.push({ benchmark: benchmark.name, scenario: scenario.name, ...measured, callsPerRequest: calls.perRequest() })
      }
      return results
    })
  } finally {
    await upstreams.stop()
  }
}

const withPodium = async <A>(starting: Promise<Podium>, use: (podium: Podium) => Promise<A>): Promise<A> => {
  const podium = await starting
  try {
    return await use(podium)
  } finally {
    await podium.stop()
  }
}

/**
 * autocannon stops with requests in flight and closes their sockets; give the server a moment to
 * see those aborts before the next run starts or the log is read.
 */
export const settle = () => new Promise((resolve) => setTimeout(resolve, 250))

/** Checks that `target` succeeds, warms up, then loads it at every connection count in turn. */
export const time = async (title: string, podium: Podium, target: Target, settings: Settings) => {
  await expectSuccess(podium.url, target)
  const memoryBefore = memory()
  await hammer(podium.url, target, 10, settings.warmupSeconds)
  await settle()
  podium.logs.reset()
  const runs: Array<Run> = []
  for (const connections of settings.connections) {
    process.stderr.write(`  ${title}: ${connections} connection(s) for ${settings.seconds} s\n`)
    runs.push(await hammer(podium.url, target, connections, settings.seconds))
    await settle()
  }
  return { runs, serverLogs: podium.logs.tally(), memoryBefore, memoryAfter: memory() }
}
