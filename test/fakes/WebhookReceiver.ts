import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"

/** A delivery as the receiver got it. */
export interface Received {
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

export interface WebhookReceiver {
  /** Where to send: `path` on the receiver's loopback port. */
  readonly url: string
  /** Every delivery so far, oldest first. */
  readonly received: Array<Received>
  /** The statuses to answer next, one per delivery; empty: `status`. */
  readonly answers: Array<number>
  /** What it answers when `answers` is empty (204 unless set). */
  status: number
  readonly close: () => Promise<void>
}

/** A loopback webhook receiver on its own port: what it got, and what it answers. */
export const startWebhookReceiver = async (path = "/hooks/podium"): Promise<WebhookReceiver> => {
  const received: Array<Received> = []
  const answers: Array<number> = []
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") })
      res.writeHead(answers.shift() ?? receiver.status).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    received,
    answers,
    status: 204,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
  return receiver
}
