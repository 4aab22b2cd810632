import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { completion } from "./OpenAiFake.ts"

export interface LabellerRequest {
  readonly path: string
  readonly authorization: string | undefined
  readonly body: any
}

/**
 * A loopback labeller: OpenAI-compatible chat completions (`POST …/chat/completions`) answered
 * `label: <last message>` after `delayMs`, and a router's key check (`GET …/key`) that accepts `key`,
 * so it can stand for the router behind a workspace's integration.
 */
export interface LabellerFake {
  readonly url: string
  /** Every request, in arrival order. */
  readonly seen: Array<LabellerRequest>
  /** Chat completion requests per last message content (the row's input), counted on arrival. */
  readonly asked: Map<string, number>
  readonly close: () => Promise<void>
}

export interface LabellerFakeOptions {
  /** How long each completion takes to arrive. */
  readonly delayMs?: number
  /** The only token `GET …/key` accepts. */
  readonly key?: string
}

export const startLabellerFake = async (options: LabellerFakeOptions = {}): Promise<LabellerFake> => {
  const fake = { seen: [], asked: new Map() } as unknown as { -readonly [K in keyof LabellerFake]: LabellerFake[K] }
  const json = (res: ServerResponse, status: number, body: unknown) => {
    if (res.destroyed) return // the caller went away (a killed server)
    res.writeHead(status, { "content-type": "application/json" })
    res.end(JSON.stringify(body))
  }
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      const body = text === "" ? null : JSON.parse(text)
      const path = new URL(req.url ?? "/", "http://x").pathname
      const authorization = req.headers.authorization
      fake.seen.push({ path, authorization, body })
      if (req.method === "GET" && path.endsWith("/key")) {
        return authorization === `Bearer ${options.key}`
          ? json(res, 200, { data: { label: "labeller key", usage: 0, limit: null, is_free_tier: false } })
          : json(res, 401, { error: { message: "No auth credentials found", code: 401 } })
      }
      if (req.method !== "POST" || !path.endsWith("/chat/completions")) return json(res, 404, { error: { message: "not found" } })
      const last = String(body?.messages?.at(-1)?.content ?? "")
      fake.asked.set(last, (fake.asked.get(last) ?? 0) + 1)
      setTimeout(() => json(res, 200, completion(`label: ${last}`, body?.model)), options.delayMs ?? 0)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  fake.close = () => {
    server.closeAllConnections()
    return new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return fake
}
