import autocannon from "autocannon"
import { performance } from "node:perf_hooks"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"

/** One request, repeated: what a scenario sends. */
export interface Target {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly headers?: Record<string, string>
  readonly body?: string
}

/** One load level of a scenario. Latencies are whole milliseconds (autocannon's histogram), 2xx only. */
export interface Run {
  readonly connections: number
  readonly seconds: number
  readonly requests: number
  readonly rps: number
  /** connections / rps: the mean time a request holds a connection, with sub-millisecond resolution. */
  readonly meanMs: number
  readonly p50Ms: number
  readonly p99Ms: number
  /** Connection errors and timeouts. */
  readonly errors: number
  readonly non2xx: number
  readonly statusCodes: Record<string, number>
  /**
   * The measured server's event-loop active time per request, in µs: its JavaScript work per call
   * (Podium's main thread, or the worker thread of a loopback upstream or the bare proxy; the
   * client runs in a worker of its own; PostgreSQL's work is not in it); null where not measured.
   */
  readonly loopUsPerRequest: number | null
}

/** The milliseconds a server's event loop has been busy so far (performance.eventLoopUtilization().active). */
export type LoopProbe = () => Promise<number>

/** This thread's loop: Podium's, when the bench runs it in process. */
export const mainLoop: LoopProbe = async () => performance.eventLoopUtilization().active

/**
 * Keeps `connections` connections busy with `target` for `seconds`. The client runs in a worker
 * thread, so it does not share the server's event loop (it still shares the machine's cores).
 */
export const hammer = async (
  url: string,
  target: Target,
  connections: number,
  seconds: number,
  loop: LoopProbe = mainLoop
): Promise<Run> => {
  const activeBefore = await loop()
  const result = await autocannon({
    url: url + target.path,
    method: target.method,
    headers: target.headers ?? {},
    ...(target.body === undefined ? {} : { body: target.body }),
    connections,
    duration: seconds,
    workers: 1
  })
  const active = (await loop()) - activeBefore
  const requests = result.requests.total
  const rps = requests / result.duration
  return {
    connections,
    seconds: result.duration,
    requests,
    rps,
    meanMs: rps === 0 ? 0 : (connections / rps) * 1000,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    statusCodes: Object.fromEntries(
      Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, stats.count ?? 0])
    ),
    loopUsPerRequest: requests === 0 ? 0 : (active * 1000) / requests
  }
}

/** Sends `target` once and fails unless it is answered 2xx, so no run measures error answers by mistake. */
export const expectSuccess = async (url: string, target: Target): Promise<void> => {
  const response = await fetch(url + target.path, {
    method: target.method,
    headers: target.headers ?? {},
    body: target.body ?? null
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${target.method} ${target.path} answered ${response.status}: ${text}`)
}

export interface Memory {
  readonly rssMb: number
  readonly heapUsedMb: number
}

setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void

/**
 * This process after a full collection: RSS counts server, harness and client worker together;
 * the heap is the main thread's, where the server runs.
 */
export const memory = (): Memory => {
  gc()
  const usage = process.memoryUsage()
  return { rssMb: usage.rss / 2 ** 20, heapUsedMb: usage.heapUsed / 2 ** 20 }
}

/**
 * How much slower this machine runs the same work after sitting idle, as a server does between the
 * requests of one connection taking turns with others: a fixed piece of JSON work timed back to back,
 * then each time after `idleMs` asleep (medians, µs). On a virtual machine a thread woken after a
 * pause runs several times slower for a while (caches, power states, the host's scheduling), and a
 * proxy's added latency at one connection is its code run in that state.
 */
export const idleWake = async (idleMs = 60) => {
  const text = JSON.stringify({ messages: [{ role: "user", content: "hello ".repeat(20) }], stream: true })
  const work = () => {
    let n = 0
    for (let i = 0; i < 300; i++) n += Object.keys(JSON.parse(text)).length
    return n
  }
  const timed = () => {
    const started = process.hrtime.bigint()
    work()
    return Number(process.hrtime.bigint() - started) / 1000
  }
  const middle = (values: Array<number>) => values.sort((a, b) => a - b)[values.length >> 1]!
  for (let i = 0; i < 1000; i++) work()
  const busy = middle(Array.from({ length: 200 }, timed))
  const woken: Array<number> = []
  for (let i = 0; i < 30; i++) {
    await new Promise((resolve) => setTimeout(resolve, idleMs))
    woken.push(timed())
  }
  return { busyUs: busy, wokenUs: middle(woken), idleMs }
}
