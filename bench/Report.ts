import { cpus, loadavg, totalmem } from "node:os"
import type { ScenarioResult, Settings } from "./Benchmark.ts"

const columns = ["benchmark", "scenario", "conns", "req/s", "mean ms", "p50 ms", "p99 ms", "loop µs/req", "errors", "non-2xx"]
const numeric = new Set(columns.slice(2))

const fixed = (value: number, digits: number) => value.toFixed(digits)

/** The results as aligned text: one line per load level, then calls and memory per scenario. */
export const table = (results: ReadonlyArray<ScenarioResult>): string => {
  const rows = results.flatMap((result) =>
    result.runs.map((run) => [
      result.benchmark,
      result.scenario,
      String(run.connections),
      fixed(run.rps, 0),
      fixed(run.meanMs, 2),
      String(run.p50Ms),
      String(run.p99Ms),
      run.loopUsPerRequest === null ? "-" : fixed(run.loopUsPerRequest, 0),
      String(run.errors),
      String(run.non2xx)
    ])
  )
  const widths = columns.map((name, i) => Math.max(name.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((cell, i) => numeric.has(columns[i]!) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)).join("  ")
  const counted = (entries: Record<string, number>, digits: number) =>
    Object.entries(entries).map(([what, count]) => `    ${fixed(count, digits).padStart(7)}  ${what}`)
  const details = results.flatMap((result) => {
    const { memoryBefore: before, memoryAfter: after } = result
    const logs = counted(result.serverLogs, 0)
    return [
      "",
      `${result.benchmark} / ${result.scenario}`,
      "  calls per request:",
      ...counted(result.callsPerRequest, 2),
      `  server log at Warn and above during the timed runs:${logs.length === 0 ? " nothing" : ""}`,
      ...logs,
      `  memory after GC: rss ${fixed(before.rssMb, 0)} -> ${fixed(after.rssMb, 0)} MB, ` +
      `heap ${fixed(before.heapUsedMb, 1)} -> ${fixed(after.heapUsedMb, 1)} MB`
    ]
  })
  return [line(columns), ...rows.map(line), ...details].join("\n")
}

/** Where and when the numbers were taken. */
export interface Conditions {
  readonly date: string
  readonly cpus: number
  readonly cpuModel: string
  readonly memoryGb: number
  /** Before the first benchmark: anything else running on the machine skews the numbers. */
  readonly loadAverageAtStart: ReadonlyArray<number>
  readonly node: string
  readonly database: string
}

export const conditions = (database: string): Conditions => ({
  date: new Date().toISOString(),
  cpus: cpus().length,
  cpuModel: cpus()[0]?.model ?? "unknown",
  memoryGb: Math.round(totalmem() / 2 ** 30),
  loadAverageAtStart: loadavg().map((load) => Math.round(load * 100) / 100),
  node: process.version,
  database
})

export const heading = (c: Conditions, settings: Settings): string =>
  `${c.date}: ${c.cpus} x ${c.cpuModel}, ${c.memoryGb} GB, Node ${c.node}, ${c.database} PostgreSQL, ` +
  `load average at start ${c.loadAverageAtStart.join(" ")}; ${settings.seconds} s per level`

/** Everything, as one JSON line, for tools. */
export const jsonLine = (c: Conditions, settings: Settings, results: ReadonlyArray<ScenarioResult>): string =>
  JSON.stringify({ podiumBench: 1, conditions: c, settings, results })
