import type { ScenarioResult, Settings } from "./Benchmark.ts"
import { startBenchPodium } from "./Benchmark.ts"
import type { Databases } from "./Databases.ts"
import { type Figure, figureLine, times } from "./Figures.ts"
import {
  defaultStream,
  type StreamShape,
  median,
  prepareLeaderboard,
  type SelfRunningBenchmark,
  settle,
  settledTraceCount,
  startBareProxy,
  startUpstream
} from "./InferenceBench.ts"
import { idleWake, type LoopProbe, mainLoop, memory } from "./Load.ts"
import { inWorker } from "./Streams.ts"

/** A streamed chat completion to send: the whole URL, its headers and body. */
export interface StreamTarget {
  readonly name: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: string
}

/** One target's streams: µs from the request's write to the answer's headers, its first body byte and its end. */
interface Streamed {
  readonly headersUs: ReadonlyArray<number>
  readonly firstByteUs: ReadonlyArray<number>
  readonly totalUs: ReadonlyArray<number>
  /** Answers that were not 200 ending in `data: [DONE]`, by status (or error). */
  readonly failed: Record<string, number>
  /** The fewest and most events (blank-line-ended) one answer held. */
  readonly events: readonly [number, number]
  readonly seconds: number
}

/**
 * The client, in its own worker thread: node:http with kept-alive sockets, reading each answer to
 * its end. "turns": one connection per target, the targets taking turns one stream at a time, so
 * that each sees the machine alike (`warmup` rounds, then `count`). "load": `connections` streams at
 * a time to the first target for `seconds`; each connection finishes the stream it has begun (no
 * stream is abandoned, so every answer Podium sent was read).
 */
const clientSource = `
const { parentPort, workerData } = require("node:worker_threads")
const http = require("node:http")
const { targets, mode, connections, seconds, warmup, count } = workerData
const agents = targets.map(() => new http.Agent({ keepAlive: true, maxSockets: connections }))
const DONE = "data: [DONE]\\n\\n"
const results = targets.map(() => ({ headersUs: [], firstByteUs: [], totalUs: [], failed: {}, events: [Infinity, 0], seconds: 0 }))
const once = (t, record) => new Promise((resolve) => {
  const target = targets[t]
  const result = results[t]
  const started = process.hrtime.bigint()
  const fail = (why) => {
    result.failed[why] = (result.failed[why] || 0) + 1
    resolve()
  }
  const request = http.request(target.url, { method: "POST", headers: target.headers, agent: agents[t] }, (response) => {
    const headers = process.hrtime.bigint()
    let first = 0n
    let events = 0
    let previous = ""
    let last = ""
    response.on("data", (chunk) => {
      if (first === 0n) first = process.hrtime.bigint()
      const text = chunk.toString("latin1")
      const joined = previous + text
      for (let at = joined.indexOf("\\n\\n"); at !== -1; at = joined.indexOf("\\n\\n", at + 2)) events++
      previous = text.slice(-1)
      last = (last + text).slice(-64)
    })
    response.on("end", () => {
      if (response.statusCode !== 200 || !last.endsWith(DONE)) return fail(String(response.statusCode) + (response.statusCode === 200 ? " without [DONE]" : ": " + last))
      if (!record) return resolve()
      result.headersUs.push(Number(headers - started) / 1000)
      result.firstByteUs.push(Number(first - started) / 1000)
      result.totalUs.push(Number(process.hrtime.bigint() - started) / 1000)
      result.events[0] = Math.min(result.events[0], events)
      result.events[1] = Math.max(result.events[1], events)
      resolve()
    })
    response.on("error", (error) => fail("error: " + error.message))
  })
  request.on("error", (error) => fail("error: " + error.message))
  request.end(target.body)
})
;(async () => {
  if (mode === "turns") {
    for (let i = 0; i < warmup + count; i++) for (let t = 0; t < targets.length; t++) await once(t, i >= warmup)
  } else {
    const started = performance.now()
    const deadline = started + seconds * 1000
    const loop = async () => { while (performance.now() < deadline) await once(0, true) }
    await Promise.all(Array.from({ length: connections }, loop))
    results[0].seconds = (performance.now() - started) / 1000
  }
  agents.forEach((agent) => agent.destroy())
  parentPort.postMessage({ results })
})().catch((error) => parentPort.postMessage({ error: String(error && error.stack || error) }))
`

/** Runs the client over `targets`; any answer that is not a whole 200 stream fails the measurement. */
export const streamClient = async (
  targets: ReadonlyArray<StreamTarget>,
  options: { readonly mode: "turns" | "load"; readonly connections: number; readonly seconds: number; readonly warmup: number; readonly count: number }
): Promise<ReadonlyArray<Streamed>> => {
  const { results } = await inWorker<{ results: Array<Streamed> }>(clientSource, { targets, ...options })
  results.forEach((result, i) => {
    if (Object.keys(result.failed).length > 0) {
      throw new Error(`stream: ${targets[i]!.name} failed: ${JSON.stringify(result.failed)}`)
    }
  })
  return results
}

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
}

/** One target at `connections` for the bench's seconds: streams per second, whole-stream times, the server's loop per stream. */
const underLoad = async (target: StreamTarget, connections: number, seconds: number, loop: LoopProbe) => {
  const activeBefore = await loop()
  const [result] = await streamClient([target], { mode: "load", connections, seconds, warmup: 0, count: 0 })
  const active = (await loop()) - activeBefore
  const streams = result!.totalUs.length
  return {
    streams,
    perSecond: streams / result!.seconds,
    seconds: result!.seconds,
    p50Ms: percentile(result!.totalUs, 50) / 1000,
    p99Ms: percentile(result!.totalUs, 99) / 1000,
    meanMs: result!.totalUs.reduce((sum, us) => sum + us, 0) / streams / 1000,
    firstByteP50Ms: percentile(result!.firstByteUs, 50) / 1000,
    loopUsPerStream: (active * 1000) / streams,
    events: result!.events
  }
}

/** Streams per target at one connection for the first-byte figure, after `firstByteWarmup` rounds. */
const firstByteCount = 150
const firstByteWarmup = 20
/** Connections for the whole-stream figure, and how many turns each target takes there (the figure: medians). */
const loadConnections = 100
const loadReps = 2

/**
 * The answers streamed: for the first byte at one connection, `defaultStream` (its streams are
 * short, so many fit in the run); under load, a model's pace of about 50 tokens a second
 * (STREAM_GAP_MS overrides the gap), so that a stream's time is the upstream's: at a few ms apart
 * 100 connections ask for tens of thousands of events a second, and the figure would measure the
 * machine's two cores (client, upstream and proxy share them) rather than the time a proxy adds.
 */
const firstByteStream: StreamShape = defaultStream
const loadStream: StreamShape = { events: defaultStream.events, gapMs: Number(process.env["STREAM_GAP_MS"] || 20) }
const shape = ({ events, gapMs }: StreamShape) => `${events} chunks ${gapMs} ms apart`

/** What the `openai` package sends for `client.chat.completions.create({ ..., stream: true })`. */
const streamBody = JSON.stringify({ messages: [{ role: "user", content: "hi" }], model: "m", stream: true })
const openAiHeaders = { "content-type": "application/json", accept: "application/json" }

export const StreamBench: SelfRunningBenchmark = {
  name: "stream",
  description:
    `POST /v1/leaderboard/{id}/chat/completions with stream: true (${shape(firstByteStream)} at one connection, ` +
    `${shape(loadStream)} at ${loadConnections}) against the same loopback upstream directly and through the bare proxy (piped)`,
  scenarios: async () => {
    throw new Error("the stream benchmark runs itself (StreamBench.run)")
  },
  run: async (databases: Databases, settings: Settings) => {
    const upstreams = [await startUpstream(0, firstByteStream), await startUpstream(0, loadStream)]
    const bares = [await startBareProxy(upstreams[0]!.url), await startBareProxy(upstreams[1]!.url)]
    const databaseUrl = await databases.create()
    const podium = await startBenchPodium(databaseUrl, { ALLOW_PRIVATE_NETWORK_TARGETS: "true" })
    let podiumStreams = 0
    let stopped = false
    try {
      /** Direct, through the bare proxy, through Podium (a leaderboard of its own): the three routes to upstream `i`. */
      const routes = async (i: number): Promise<ReadonlyArray<StreamTarget>> => {
        const { id, secret } = await prepareLeaderboard(podium, upstreams[i]!.url)
        const direct = { name: "direct upstream", url: `${upstreams[i]!.url}/chat/completions`, headers: openAiHeaders, body: streamBody }
        return [direct, { ...direct, name: "bare proxy (piped)", url: `${bares[i]!.url}/chat/completions` }, {
          name: "Podium POST /v1/leaderboard/{id}/chat/completions, stream: true",
          url: `${podium.url}/v1/leaderboard/${id}/chat/completions`,
          headers: { ...openAiHeaders, authorization: `Bearer ${secret}` },
          body: streamBody
        }]
      }
      const all = await routes(0)
      const loaded = await routes(1)
      const viaPodium = all[2]!

      await streamClient([viaPodium], { mode: "turns", connections: 1, seconds: 0, warmup: 0, count: 1 })
      podiumStreams += 1
      const memoryBefore = memory()

      const loops: ReadonlyArray<LoopProbe> = [upstreams[1]!.loop, bares[1]!.loop, mainLoop]
      const loads: Array<Array<Awaited<ReturnType<typeof underLoad>>>> = [[], [], []]
      for (const [i, target] of loaded.entries()) {
        await underLoad(target, loadConnections, settings.warmupSeconds, loops[i]!).then((warm) => {
          if (i === 2) podiumStreams += warm.streams
        })
        await settle()
      }
      for (let rep = 1; rep <= loadReps; rep++) {
        for (const [i, target] of loaded.entries()) {
          process.stderr.write(`  stream / ${target.name}: ${loadConnections} connections for ${settings.seconds} s (turn ${rep} of ${loadReps})\n`)
          const load = await underLoad(target, loadConnections, settings.seconds, loops[i]!)
          if (i === 2) podiumStreams += load.streams
          loads[i]!.push(load)
          await settle()
        }
      }

      // After the load, so that each proxy's code is what a running service runs: V8 optimizes a
      // function after thousands of calls, and the first few hundred streams of a fresh process run
      // its interpreted code (Podium's first byte was 5-8 ms then, 2-3 ms once optimized).
      process.stderr.write(`  stream: one connection each, ${firstByteWarmup} + ${firstByteCount} streams per target in turns\n`)
      const turns = await streamClient(all, { mode: "turns", connections: 1, seconds: 0, warmup: firstByteWarmup, count: firstByteCount })
      podiumStreams += firstByteWarmup + firstByteCount
      const firstByteP50 = turns.map((result) => percentile(result.firstByteUs, 50))
      const totalP50 = turns.map((result) => percentile(result.totalUs, 50))
      const wake = await idleWake()
      const memoryAfter = memory()
      await podium.stop()
      stopped = true
      const traces = await settledTraceCount(databaseUrl)

      const results: Array<ScenarioResult> = all.map((target, i) => ({
        benchmark: "stream",
        scenario: `${target.name}, ${shape(loadStream)}`,
        runs: loads[i]!.map((load) => ({
          connections: loadConnections,
          seconds: load.seconds,
          requests: load.streams,
          rps: load.perSecond,
          meanMs: load.meanMs,
          p50Ms: Math.round(load.p50Ms),
          p99Ms: Math.round(load.p99Ms),
          errors: 0,
          non2xx: 0,
          statusCodes: { "200": load.streams },
          loopUsPerRequest: load.loopUsPerStream
        })),
        serverLogs: i === 2 ? podium.logs.tally() : {},
        memoryBefore,
        memoryAfter,
        callsPerRequest: {}
      }))
      const wholeP50 = loads.map((reps) => median(reps.map((load) => load.p50Ms)))
      const ms = (value: number) => `${value.toFixed(2)} ms`
      const us = (value: number) => `${value.toFixed(0)} us`
      const figures: Array<Figure> = [
        {
          name: "stream time to first byte p50, 1 connection",
          podium: us(firstByteP50[2]!),
          reference: `direct upstream ${us(firstByteP50[0]!)}`,
          comparison: `+${us(firstByteP50[2]! - firstByteP50[0]!)}`,
          target: "added < 1000 us",
          met: firstByteP50[2]! - firstByteP50[0]! < 1000,
          how: `${firstByteCount} streams each, in turns; bare proxy ${us(firstByteP50[1]!)} ` +
            `(+${us(firstByteP50[1]! - firstByteP50[0]!)}); whole stream p50 Podium ${ms(totalP50[2]! / 1000)}, ` +
            `direct ${ms(totalP50[0]! / 1000)}, bare proxy ${ms(totalP50[1]! / 1000)}; this machine runs the same work ` +
            `${times(wake.wokenUs, wake.busyUs)} as long after ${wake.idleMs} ms idle as back to back (${us(wake.wokenUs)} vs ${us(wake.busyUs)})`
        },
        {
          name: `stream whole-stream time p50, ${loadConnections} connections`,
          podium: ms(wholeP50[2]!),
          reference: `direct upstream ${ms(wholeP50[0]!)}`,
          comparison: times(wholeP50[2]!, wholeP50[0]!),
          target: "<= 1.05x",
          met: wholeP50[2]! <= 1.05 * wholeP50[0]!,
          how: `${shape(loadStream)}, medians of ${loadReps} turns of ${settings.seconds} s; bare proxy ${ms(wholeP50[1]!)} ` +
            `(${times(wholeP50[1]!, wholeP50[0]!)}); streams/s Podium ${median(loads[2]!.map((l) => l.perSecond)).toFixed(0)}, ` +
            `bare proxy ${median(loads[1]!.map((l) => l.perSecond)).toFixed(0)}, direct ${median(loads[0]!.map((l) => l.perSecond)).toFixed(0)}; ` +
            `loop us/stream Podium ${median(loads[2]!.map((l) => l.loopUsPerStream)).toFixed(0)}, ` +
            `bare proxy ${median(loads[1]!.map((l) => l.loopUsPerStream)).toFixed(0)}`
        }
      ]
      const events = loads.map((reps) => reps.map((load) => load.events.join("-")).join(", "))
      const notes = [
        `stream: ${shape(firstByteStream)} at one connection, ${shape(loadStream)} at ${loadConnections}, then usage and ` +
        "[DONE], each read to its end",
        ...all.map((target, i) =>
          `  ${target.name}: 1 connection headers p50 ${us(percentile(turns[i]!.headersUs, 50))}, first byte p50 ` +
          `${us(firstByteP50[i]!)}, p90 ${us(percentile(turns[i]!.firstByteUs, 90))}, ` +
          `whole p50 ${ms(totalP50[i]! / 1000)}; ${loadConnections} connections whole p50 ` +
          `${loads[i]!.map((load) => ms(load.p50Ms)).join(", ")}, first byte p50 ${loads[i]!.map((load) => ms(load.firstByteP50Ms)).join(", ")}; ` +
          `events per answer ${events[i]}`
        ),
        `  traces: ${podiumStreams} streams answered by Podium, ${traces} traces: ` +
        `${traces === podiumStreams ? "equal: every stream traced once" : "MISMATCH"}`,
        "stream: issue 30's figures",
        ...figures.map(figureLine)
      ]
      return { results, notes }
    } finally {
      if (!stopped) await podium.stop()
      for (const server of [...bares, ...upstreams]) await server.close()
    }
  }
}
