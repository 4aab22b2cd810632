import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"

/** A loopback JSON server: `answer(path, body)` gives each request's JSON answer (status 200), or a promise of it. */
export const loopbackFake = (answer: (path: string, body: any) => unknown) => {
  let server: Server | undefined
  let url = ""
  return {
    url: () => url,
    start: async () => {
      server = createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8")
          const body = text === "" ? null : JSON.parse(text)
          void Promise.resolve(answer(new URL(req.url ?? "/", "http://x").pathname, body)).then((json) => {
            res.writeHead(200, { "content-type": "application/json" })
            res.end(JSON.stringify(json))
          })
        })
      })
      await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve))
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    },
    stop: () => new Promise<void>((resolve) => server ? server.close(() => resolve()) : resolve())
  }
}
