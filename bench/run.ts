import { AuthBench } from "./AuthBench.ts"
import { type Benchmark, runBenchmark, type ScenarioResult, type Settings } from "./Benchmark.ts"
import { openDatabases } from "./Databases.ts"
import { DashboardBench } from "./DashboardBench.ts"
import { DatasetBench } from "./DatasetBench.ts"
import { ExportBench } from "./ExportBench.ts"
import { HealthBench } from "./HealthBench.ts"
import { HumanBench } from "./HumanBench.ts"
import { InferenceBench, type SelfRunningBenchmark } from "./InferenceBench.ts"
import { ModelInferenceBench } from "./ModelInferenceBench.ts"
import { conditions, heading, jsonLine, table } from "./Report.ts"
import { RunBench } from "./RunBench.ts"
import { StreamBench } from "./StreamBench.ts"
import { WebBench } from "./WebBench.ts"

/**
 * `npm run bench [-- <name>...]`: runs the named benchmarks, or all of them, each against its own
 * Podium in this process. Env: BENCH_SECONDS (per load level, default 5), DATABASE_URL (a
 * PostgreSQL server to create the databases on; an embedded one otherwise).
 */
const benchmarks: ReadonlyArray<Benchmark | SelfRunningBenchmark> = [
  HealthBench,
  AuthBench,
  InferenceBench,
  StreamBench,
  ModelInferenceBench,
  HumanBench,
  DatasetBench,
  ExportBench,
  RunBench,
  WebBench,
  DashboardBench
]

const usage = () =>
  ["usage: npm run bench [-- <name>...]", "benchmarks:", ...benchmarks.map((b) => `  ${b.name.padEnd(8)} ${b.description}`)]
    .join("\n")

const selected = (names: ReadonlyArray<string>): ReadonlyArray<Benchmark | SelfRunningBenchmark> => {
  const unknown = names.filter((name) => !benchmarks.some((b) => b.name === name))
  if (unknown.length > 0) {
    console.error(`unknown benchmark: ${unknown.join(", ")}\n${usage()}`)
    process.exit(1)
  }
  return names.length === 0 ? benchmarks : [...new Set(names)].map((name) => benchmarks.find((b) => b.name === name)!)
}

const secondsFromEnv = (): number => {
  const raw = process.env["BENCH_SECONDS"]
  if (raw === undefined || raw === "") return 5
  const seconds = Number(raw)
  if (!Number.isFinite(seconds) || seconds <= 0) {
    console.error(`BENCH_SECONDS must be a positive number of seconds, got ${JSON.stringify(raw)}`)
    process.exit(1)
  }
  return seconds
}

const toRun = selected(process.argv.slice(2))
const seconds = secondsFromEnv()
const settings: Settings = { seconds, connections: [1, 10, 100], warmupSeconds: Math.min(1, seconds), countedRequests: 50 }

const databases = await openDatabases(process.env["DATABASE_URL"] || undefined)
const taken = conditions(databases.server)
const results: Array<ScenarioResult> = []
const notes: Array<string> = []
try {
  for (const benchmark of toRun) {
    process.stderr.write(`${benchmark.name}: ${benchmark.description}\n`)
    if ("run" in benchmark) {
      const ran = await benchmark.run(databases, settings)
      results.push(...ran.results)
      notes.push(...ran.notes)
    } else {
      results.push(...await runBenchmark(benchmark, databases, settings))
    }
  }
} finally {
  await databases.close()
}

console.log(heading(taken, settings))
console.log(table(results))
if (notes.length > 0) console.log(["", ...notes].join("\n"))
console.log(jsonLine(taken, settings, results))
