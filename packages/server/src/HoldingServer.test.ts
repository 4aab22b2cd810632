import { once } from "node:events"
import { type AddressInfo, connect } from "node:net"
import { describe, expect, it } from "vitest"
import type { IncomingMessage, ServerResponse } from "node:http"
import { createHoldingServer, type FrontDoor } from "./HoldingServer.ts"

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

  it("answers a request that stalls mid-headers with 408 and the contract's error body", async () => {
    const server = createHoldingServer({ headersTimeout: 200, requestTimeout: 300, connectionsCheckingInterval: 50 })
    server.on("request", (_, response) => response.end("never"))
    server.listen(0, "127.0.0.1")
    await once(server, "listening")
    const socket = connect((server.address() as AddressInfo).port, "127.0.0.1")
    socket.write("GET / HTTP/1.1\r\nHost: x\r\n") // and nothing more
    let answer = ""
    socket.on("data", (chunk) => answer += chunk)
    await once(socket, "close")
    expect(answer).toMatch(/^HTTP\/1\.1 408 /)
    expect(answer).toContain("Content-Type: application/json")
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toEqual({
      error: { code: "request_timeout", message: "The request took too long to arrive" }
    })
    server.close()
  })

  it("offers each request to the front route first and hands what it declines to the handler, once", async () => {
    const front: FrontDoor = { route: undefined }
    const server = createHoldingServer({}, front)
    server.listen(0, "127.0.0.1")
    await once(server, "listening")
    const url = (path: string) => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`
    front.route = {
      handle: (request, response) => request.url === "/front" && (response.end("front door"), true)
    }
    const early = [fetch(url("/front")).then((r) => r.text()), fetch(url("/early")).then((r) => r.text())]
    await new Promise((resolve) => setTimeout(resolve, 100))
    const seen: Array<string | undefined> = []
    const handler = (request: IncomingMessage, response: ServerResponse) => {
      seen.push(request.url)
      response.end(`handled ${request.url}`)
    }
    server.on("request", handler)
    expect(await Promise.all(early)).toEqual(["front door", "handled /early"])
    expect(await fetch(url("/front")).then((r) => r.text())).toBe("front door")
    expect(await fetch(url("/late")).then((r) => r.text())).toBe("handled /late")
    expect(seen).toEqual(["/early", "/late"])
    // Node calls the server's own listener only; the handler is reached through it
    expect(server.listeners("request")).not.toContain(handler)
    front.route = undefined
    expect(await fetch(url("/front")).then((r) => r.text())).toBe("handled /front")
    server.close()
  })
})
