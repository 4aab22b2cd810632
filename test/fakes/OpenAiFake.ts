import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

export interface SeenRequest {
  readonly path: string
  readonly headers: IncomingMessage["headers"]
  readonly body: any
}

/** A loopback server speaking OpenAI chat completions (`POST …/chat/completions`). */
export interface OpenAiFake {
  readonly url: string
  readonly seen: Array<SeenRequest>
  /** The completions answered, as sent. */
  readonly sent: Array<string>
  /**
   * What the next answers are: a completion (default), an upstream error, invalid JSON, or a
   * completion whose content holds U+0000 and a lone surrogate (which Postgres cannot store).
   */
  mode: "ok" | "error" | "garbage" | "poison"
  /**
   * Whether a `stream: true` request is answered as OpenAI streams (the completion's content in
   * three deltas, the usage chunk when asked, `data: [DONE]`); else (default) with the JSON
   * completion, as an upstream that does not stream would.
   */
  streams: boolean
  readonly close: () => Promise<void>
}

export const completion = (content: string, model = "fake-model") => ({
  id: "chatcmpl-fake",
  object: "chat.completion",
  created: 1_790_000_000,
  model,
  choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
  usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 }
})

export const startOpenAiFake = async (): Promise<OpenAiFake> => {
  const fake = { seen: [], sent: [], mode: "ok", streams: false } as unknown as { -readonly [K in keyof OpenAiFake]: OpenAiFake[K] }
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "null")
      fake.seen.push({ path: new URL(req.url ?? "/", "http://x").pathname, headers: req.headers, body })
      if (fake.mode === "error") {
        res.writeHead(500, { "content-type": "application/json" })
        return res.end(JSON.stringify({ error: { message: "the model is overloaded", type: "server_error" } }))
      }
      if (fake.mode === "garbage") {
        res.writeHead(200, { "content-type": "application/json" })
        return res.end("{not json")
      }
      const last = body?.messages?.at(-1)?.content ?? ""
      if (fake.streams && body?.stream === true) {
        const content = `echo: ${last}`
        const { choices: _, usage, ...head } = completion(content, body?.model)
        const chunk = (delta: object, finish: string | null) =>
          `data: ${JSON.stringify({ ...head, object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
        const thirds = [0, 1, 2].map((i) => content.slice(Math.floor(i * content.length / 3), Math.floor((i + 1) * content.length / 3)))
        const events = [
          chunk({ role: "assistant", content: thirds[0] }, null),
          chunk({ content: thirds[1] }, null),
          chunk({ content: thirds[2] }, "stop"),
          ...(body.stream_options?.include_usage === true
            ? [`data: ${JSON.stringify({ ...head, object: "chat.completion.chunk", choices: [], usage })}\n\n`]
            : []),
          "data: [DONE]\n\n"
        ].join("")
        fake.sent.push(events)
        res.writeHead(200, { "content-type": "text/event-stream" })
        return res.end(events)
      }
      res.writeHead(200, { "content-type": "application/json" })
      // pretty-printed, so a proxy that re-serialises the answer shows up
      const content = fake.mode === "poison" ? `poison: \u0000 \ud800 ${last}` : `echo: ${last}`
      const answer = JSON.stringify(completion(content, body?.model), null, 2)
      fake.sent.push(answer)
      res.end(answer)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  fake.close = () => new Promise<void>((resolve) => server.close(() => resolve()))
  return fake
}
