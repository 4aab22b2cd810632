import type pg from "pg"
import { to as copyTo } from "pg-copy-streams"
import { Worker } from "node:worker_threads"

/**
 * Runs `source` (CommonJS) in its own thread with `workerData` and answers the one message it posts
 * (a message with an `error` member rejects). Clients run so, as autocannon does: on Podium's event
 * loop their work would count as the server's.
 */
export const inWorker = <A>(source: string, workerData: unknown) =>
  new Promise<A>((resolve, reject) => {
    const worker = new Worker(source, { eval: true, workerData })
    worker.once("message", (message: A & { error?: string }) => {
      void worker.terminate()
      if (message.error !== undefined) reject(new Error(message.error))
      else resolve(message)
    })
    worker.once("error", reject)
  })

/** A streamed reference read: lines (newlines counted), bytes and seconds. */
export interface Counted {
  readonly rows: number
  readonly bytes: number
  readonly seconds: number
}

/** `COPY (…) TO STDOUT` of `query` on `client`, counted as the HTTP clients count. */
export const copyOut = (client: pg.Client, query: string) =>
  new Promise<Counted>((resolve, reject) => {
    const started = performance.now()
    let bytes = 0
    let rows = 0
    const stream = client.query(copyTo(`COPY (${query}) TO STDOUT`))
    stream.on("data", (chunk: Buffer) => {
      bytes += chunk.length
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) rows++
    })
    stream.once("end", () => resolve({ rows, bytes, seconds: (performance.now() - started) / 1000 }))
    stream.once("error", reject)
  })
