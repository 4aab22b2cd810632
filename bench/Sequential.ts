import { Worker } from "node:worker_threads"
import type { Target } from "./Load.ts"

/** Latencies of one-at-a-time requests, to the microsecond (autocannon's histogram has whole ms). */
export interface SequentialLatency {
  readonly requests: number
  /** 2xx answers; every other answer fails the measurement. */
  readonly succeeded: number
  readonly p50Us: number
  readonly p90Us: number
  readonly p99Us: number
  readonly meanUs: number
}

/**
 * The client: node:http over one kept-alive socket, in its own worker thread (like autocannon's),
 * timing each request from write to the last byte of the answer with process.hrtime.
 */
const clientSource = `
const { parentPort, workerData } = require("node:worker_threads")
const http = require("node:http")
const { url, method, headers, body, warmup, count } = workerData
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
const once = () => new Promise((resolve, reject) => {
  const started = process.hrtime.bigint()
  const request = http.request(url, { method, headers, agent }, (response) => {
    response.resume()
    response.on("end", () => resolve({ status: response.statusCode, us: Number(process.hrtime.bigint() - started) / 1000 }))
  })
  request.on("error", reject)
  request.end(body)
})
;(async () => {
  for (let i = 0; i < warmup; i++) await once()
  const us = []
  const statuses = {}
  for (let i = 0; i < count; i++) {
    const answer = await once()
    statuses[answer.status] = (statuses[answer.status] || 0) + 1
    us.push(answer.us)
  }
  agent.destroy()
  parentPort.postMessage({ us, statuses })
})().catch((error) => parentPort.postMessage({ error: String(error) }))
`

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

export const sequential = (
  url: string,
  target: Target,
  options: { readonly warmup: number; readonly count: number }
): Promise<SequentialLatency & { readonly warmup: number }> =>
  new Promise((resolve, reject) => {
    const worker = new Worker(clientSource, {
      eval: true,
      workerData: {
        url: url + target.path,
        method: target.method,
        headers: target.headers ?? {},
        body: target.body,
        ...options
      }
    })
    worker.once("error", reject)
    worker.once("message", (message: { us?: Array<number>; statuses?: Record<string, number>; error?: string }) => {
      void worker.terminate()
      if (message.error !== undefined) return reject(new Error(message.error))
      const sorted = [...message.us!].sort((a, b) => a - b)
      const succeeded = Object.entries(message.statuses!)
        .reduce((sum, [status, n]) => (status.startsWith("2") ? sum + n : sum), 0)
      if (succeeded !== sorted.length) {
        return reject(new Error(`sequential requests to ${target.path} answered ${JSON.stringify(message.statuses)}`))
      }
      resolve({
        requests: sorted.length,
        succeeded,
        warmup: options.warmup,
        p50Us: Math.round(percentile(sorted, 50)),
        p90Us: Math.round(percentile(sorted, 90)),
        p99Us: Math.round(percentile(sorted, 99)),
        meanUs: Math.round(sorted.reduce((sum, us) => sum + us, 0) / sorted.length)
      })
    })
  })
