import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { completion } from "./OpenAiFake.ts"

export interface ModelRequest {
  readonly method: string
  readonly path: string
  readonly search: string
  readonly authorization: string | undefined
  readonly body: any
}

/** How a model answers the last user message: text, or an HTTP status it fails with. */
export type Answer = string | { readonly status: number }

/**
 * A loopback stand-in for every outside service a run talks to: OpenAI-compatible chat completions
 * (`POST …/chat/completions`) answered per `model` by `models[model](last user message, body)`
 * after `delayMs`, a router's key check (`GET …/key` accepts `key`), and files served at their paths
 * (`files`) with their content type, for GET datasets and the hub's dataset-viewer API.
 */
export interface ModelFake {
  readonly url: string
  readonly seen: Array<ModelRequest>
  /** Chat completions per model and last user message, counted on arrival. */
  readonly asked: Map<string, number>
  models: Record<string, (question: string, body: any) => Answer>
  files: Record<string, { readonly contentType: string; readonly body: string | ((search: URLSearchParams) => unknown) }>
  delayMs: number
  readonly close: () => Promise<void>
}

export const startModelFake = async (options: { readonly key?: string } = {}): Promise<ModelFake> => {
  const fake = { seen: [], asked: new Map(), models: {}, files: {}, delayMs: 0 } as unknown as {
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
      fake.seen.push({ method: req.method ?? "", path: url.pathname, search: url.search, authorization, body })
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
      const messages: Array<{ role: string; content: string }> = body?.messages ?? []
      const question = String([...messages].reverse().find((m) => m.role === "user")?.content ?? "")
      const key = `${body?.model}:${question}`
      fake.asked.set(key, (fake.asked.get(key) ?? 0) + 1)
      const model = fake.models[String(body?.model)]
      const answer: Answer = model === undefined ? { status: 404 } : model(question, body)
      setTimeout(() =>
        typeof answer === "string"
          ? json(res, 200, completion(answer, body?.model))
          : json(res, answer.status, { error: { message: `failed with ${answer.status}` } }), fake.delayMs)
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
