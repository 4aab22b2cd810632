import { once } from "node:events"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "vitest"
import { createHoldingServer } from "./HoldingServer.ts"

describe("createHoldingServer", () => {
  it("answers a request that arrived before the handler was attached", async () => {
    const server = createHoldingServer()
    server.listen(0, "127.0.0.1")
    await once(server, "listening")
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/early`
    const early = fetch(url).then((r) => r.text())
    await new Promise((resolve) => setTimeout(resolve, 100))
    server.on("request", (request, response) => response.end(`handled ${request.url}`))
    expect(await early).toBe("handled /early")
    expect(await fetch(url.replace("early", "late")).then((r) => r.text())).toBe("handled /late")
    server.close()
  })
})
