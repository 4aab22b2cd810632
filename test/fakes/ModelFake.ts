import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { completion } from "./OpenAiFake.ts"

export interface ModelRequest {
  readonly method: string
  readonly path: string
  readonly search: string
  readonly authorization: string | undefined
  readonly body: any
  /** The caller closed the request before the answer was finished. */
  aborted: boolean
}

/** Token counts as OpenAI reports them. */
export interface Usage {
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly total_tokens: number
}

/**
 * A streamed answer (to a `stream: true` request), in OpenAI's chunk format: a first event with
 * the role, one event per content delta, one per tool call delta, one with the finish reason, the
 * usage-only chunk when the request asked for it (`stream_options.include_usage`), `data: [DONE]`.
 */
export interface StreamScript {
  readonly stream: {
    /** Content deltas, one event each. */
    readonly deltas?: ReadonlyArray<string>
    /** Entries of `delta.tool_calls` (index, id, type, function name and argument pieces), one event each. */
    readonly toolCalls?: ReadonlyArray<unknown>
    /** `stop`, or `tool_calls` when there are tool calls, unless given. */
    readonly finishReason?: string
    readonly usage?: Usage
    /** Between events. */
    readonly delayMs?: number
    /** Destroys the socket once this many events are written. */
    readonly failAfter?: number
    /** Ends the response without `data: [DONE]` (and without the usage chunk). */
    readonly noDone?: boolean
    /** Holds the stream open: once `after` events are written, waits for `gate` (see `latch`) before the rest. */
    readonly holds?: ReadonlyArray<{ readonly after: number; readonly gate: Promise<unknown> }>
    /**
     * Content of `bytes` ASCII characters in deltas of `chunkBytes`, made as the reader takes them:
     * each write waits for `drain` when `write()` says the buffer is full, so it is never all in memory.
     */
    readonly generated?: { readonly bytes: number; readonly chunkBytes?: number }
  }
}

/**
 * How a model answers the last user message: text, an HTTP status it fails with, a completion sent
 * as given (`json`), or a scripted stream. A `stream: true` request gets text as a stream of a few
 * deltas, and a script as scripted; other requests get text and `json` whole (a script's deltas joined).
 */
export type Answer = string | { readonly status: number } | { readonly json: unknown } | StreamScript

/** One streamed answer, as it went. */
export interface StreamRecord {
  readonly model: string
  readonly body: any
  /** The `data:` payloads written (a generated answer's deltas only counted, not kept). */
  readonly events: Array<string>
  /** How many `data:` events were written. */
  eventsSent: number
  /** The content written (for a generated answer, its length only: `contentLength`). */
  text: string
  contentLength: number
  /** Times `write()` returned false, each waited out until `drain`. */
  backpressured: number
  /** Podium closed the request before the answer was finished. */
  aborted: boolean
  /** The answer was written to its end (`[DONE]`, or the end a script asked for). */
  finished: boolean
  /** Settles when the response is closed, however it ended. */
  readonly closed: Promise<void>
}

/**
 * A loopback stand-in for every outside service a run talks to: OpenAI-compatible chat completions
 * (`POST …/chat/completions`) answered per `model` by `models[model](last user message, body)`
 * after `delayMs`, a router's key check (`GET …/key` accepts `key`), and files served at their paths
 * (`files`) with their content type, for GET datasets and the hub's dataset-viewer API. Streamed
 * answers (`stream: true`) are kept in `streams`; whole answers as sent in `sent`.
 */
export interface ModelFake {
  readonly url: string
  readonly seen: Array<ModelRequest>
  /** Chat completions per model and last user message, counted on arrival. */
  readonly asked: Map<string, number>
  readonly sent: Array<string>
  readonly streams: Array<StreamRecord>
  /** Each answers an `Answer` (typed loosely, so that helpers typed for text and statuses take this fake). */
  models: Record<string, (question: string, body: any) => any>
  files: Record<string, { readonly contentType: string; readonly body: string | ((search: URLSearchParams) => unknown) }>
  delayMs: number
  readonly close: () => Promise<void>
}

const defaultUsage: Usage = { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 }

/** A promise and the function that settles it: a stream's `gate`. */
export const latch = () => {
  let release!: () => void
  const gate = new Promise<void>((resolve) => release = resolve)
  return { gate, release }
}

/** The text of a message's content: a string, or its text parts joined. */
const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
    ? content.filter((p: any) => p?.type === "text").map((p: any) => String(p.text)).join("\n")
    : ""

/** Text streamed as about three deltas, split at spaces. */
const deltasOf = (text: string): Array<string> => {
  const words = text.split(/(?<= )/)
  const size = Math.max(1, Math.ceil(words.length / 3))
  const deltas: Array<string> = []
  for (let i = 0; i < words.length; i += size) deltas.push(words.slice(i, i + size).join(""))
  return deltas.length === 0 ? [""] : deltas
}

const isScript = (answer: Answer): answer is StreamScript => typeof answer === "object" && "stream" in answer

const stream = async (res: ServerResponse, body: any, script: StreamScript["stream"], record: StreamRecord) => {
  const model = String(body?.model)
  const includeUsage = body?.stream_options?.include_usage === true
  const chunk = (choices: Array<unknown>, usage?: Usage) =>
    JSON.stringify({
      id: "chatcmpl-fake",
      object: "chat.completion.chunk",
      created: 1_790_000_000,
      model,
      choices,
      ...(includeUsage ? { usage: usage ?? null } : {})
    })
  const gone = () => res.destroyed || record.aborted
  const pause = (ms: number) => ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve()
  /** Writes, waiting for `drain` when the buffer is full; false once the response is gone. */
  const write = async (text: string) => {
    if (gone()) return false
    flushed = new Promise<void>((resolve) => res.write(text, () => resolve())) // handed to the socket
    if (res.writableNeedDrain) {
      record.backpressured++
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off("drain", done)
          res.off("close", done)
          resolve()
        }
        res.on("drain", done)
        res.on("close", done)
      })
    }
    return !gone()
  }
  const event = async (payload: string, keep = true) => {
    if (record.eventsSent > 0) await pause(script.delayMs ?? 0)
    if (gone()) return false
    if (script.failAfter !== undefined && record.eventsSent >= script.failAfter) {
      failing = true
      await flushed // what was written reaches the caller before the socket breaks
      res.destroy()
      return false
    }
    for (const hold of script.holds ?? []) {
      if (hold.after !== record.eventsSent) continue
      await hold.gate
      if (gone()) return false
    }
    record.eventsSent++
    if (keep) record.events.push(payload)
    return write(`data: ${payload}\n\n`)
  }
  let failing = false
  let flushed = Promise.resolve()
  res.on("close", () => {
    if (!res.writableEnded && !failing) record.aborted = true
  })
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  res.flushHeaders()
  if (!(await event(chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }])))) return
  for (const delta of script.deltas ?? []) {
    if (!(await event(chunk([{ index: 0, delta: { content: delta }, finish_reason: null }])))) return
    record.text += delta
    record.contentLength += delta.length
  }
  if (script.generated !== undefined) {
    const size = script.generated.chunkBytes ?? 16_384
    const piece = "abcdefghijklmnopqrstuvwxyz0123456789".repeat(Math.ceil(size / 36)).slice(0, size)
    for (let left = script.generated.bytes; left > 0; left -= size) {
      const delta = left >= size ? piece : piece.slice(0, left)
      if (!(await event(chunk([{ index: 0, delta: { content: delta }, finish_reason: null }]), false))) return
      record.contentLength += delta.length
    }
  }
  for (const call of script.toolCalls ?? []) {
    if (!(await event(chunk([{ index: 0, delta: { tool_calls: [call] }, finish_reason: null }])))) return
  }
  const finish = script.finishReason ?? ((script.toolCalls ?? []).length > 0 ? "tool_calls" : "stop")
  if (!(await event(chunk([{ index: 0, delta: {}, finish_reason: finish }])))) return
  if (script.noDone === true) {
    record.finished = true
    return void res.end()
  }
  if (includeUsage && !(await event(chunk([], script.usage ?? defaultUsage)))) return
  if (!(await write("data: [DONE]\n\n"))) return
  record.finished = true
  res.end()
}

export const startModelFake = async (options: { readonly key?: string } = {}): Promise<ModelFake> => {
  const fake = { seen: [], asked: new Map(), sent: [], streams: [], models: {}, files: {}, delayMs: 0 } as unknown as {
    -readonly [K in keyof ModelFake]: ModelFake[K]
  }
  const send = (res: ServerResponse, status: number, contentType: string, body: string) => {
    if (res.destroyed) return // the caller went away (a killed server)
    res.writeHead(status, { "content-type": contentType })
    res.end(body)
  }
  const json = (res: ServerResponse, status: number, body: unknown) => send(res, status, "application/json", JSON.stringify(body))
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      const body = text === "" ? null : JSON.parse(text)
      const url = new URL(req.url ?? "/", "http://x")
      const authorization = req.headers.authorization
      const seen: ModelRequest = { method: req.method ?? "", path: url.pathname, search: url.search, authorization, body, aborted: false }
      fake.seen.push(seen)
      res.on("close", () => {
        if (!res.writableEnded) seen.aborted = true
      })
      if (req.method === "GET" && url.pathname.endsWith("/key")) {
        return authorization === `Bearer ${options.key}`
          ? json(res, 200, { data: { label: "key", usage: 0, limit: null, is_free_tier: false } })
          : json(res, 401, { error: { message: "No auth credentials found", code: 401 } })
      }
      const file = fake.files[url.pathname]
      if (req.method === "GET" && file !== undefined) {
        return typeof file.body === "string"
          ? send(res, 200, file.contentType, file.body)
          : send(res, 200, file.contentType, JSON.stringify(file.body(url.searchParams)))
      }
      if (req.method !== "POST" || !url.pathname.endsWith("/chat/completions")) return json(res, 404, { error: { message: "not found" } })
      const messages: Array<{ role: string; content: unknown }> = body?.messages ?? []
      const last = [...messages].reverse().find((m) => m.role === "user")?.content ?? ""
      const question = typeof last === "string" ? last : Array.isArray(last) ? textOf(last) : String(last)
      const key = `${body?.model}:${question}`
      fake.asked.set(key, (fake.asked.get(key) ?? 0) + 1)
      const model = fake.models[String(body?.model)]
      const answer: Answer = model === undefined ? { status: 404 } : model(question, body) as Answer
      const streamed = body?.stream === true && (typeof answer === "string" || isScript(answer))
      setTimeout(() => {
        if (streamed) {
          const script = typeof answer === "string" ? { deltas: deltasOf(answer) } : (answer as StreamScript).stream
          const record: StreamRecord = {
            model: String(body?.model),
            body,
            events: [],
            eventsSent: 0,
            text: "",
            contentLength: 0,
            backpressured: 0,
            aborted: false,
            finished: false,
            closed: new Promise<void>((resolve) => res.once("close", () => resolve()))
          }
          fake.streams.push(record)
          if (res.destroyed) record.aborted = true
          return void stream(res, body, script, record)
        }
        if (typeof answer === "string" || isScript(answer)) {
          const content = typeof answer === "string" ? answer : (answer.stream.deltas ?? []).join("")
          const sent = JSON.stringify(completion(content, body?.model))
          fake.sent.push(sent)
          return send(res, 200, "application/json", sent)
        }
        if ("json" in answer) {
          const sent = JSON.stringify(answer.json)
          fake.sent.push(sent)
          return send(res, 200, "application/json", sent)
        }
        json(res, answer.status, { error: { message: `failed with ${answer.status}` } })
      }, fake.delayMs)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return fake
}
