import { readFileSync } from "node:fs"
import { connect, type Socket } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { session } from "./support/Podium.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

/**
 * Connections that send nothing, or sit idle between requests, are closed by the server; a request
 * that arrives slowly but steadily is still answered. The timeouts are set short here (the
 * defaults are 60 s and 5 s).
 */
let podium: Podium
let port: number

beforeAll(async () => {
  podium = await startPodium({ HTTP_HEADERS_TIMEOUT_MS: "500", HTTP_KEEP_ALIVE_TIMEOUT_MS: "200" })
  port = Number(new URL(podium.url).port)
})
afterAll(() => podium.stop())

/**
 * A socket that, like a client that never closes, keeps its side open (`allowHalfOpen`): it resolves
 * once the server has closed the connection for good, that is once the server's end has arrived
 * and a byte written after it is refused.
 */
const closedByServer = (socket: Socket) =>
  new Promise<string>((resolve) => {
    let received = ""
    socket.on("data", (chunk) => received += chunk.toString("latin1"))
    socket.on("error", () => {})
    socket.on("close", () => resolve(received))
    socket.on("end", () => {
      const poke = setInterval(() => socket.write("x"), 50)
      socket.on("close", () => clearInterval(poke))
    })
  })

/**
 * Connections the server still holds on its port: the kernel's TCP table rows (Linux) whose local
 * port is the server's, that are not the listener, and that a process still owns (inode not 0).
 * The server runs in this process, so only its own sockets have that local port.
 */
const heldByServer = () => {
  let held = 0
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = ""
    try {
      text = readFileSync(table, "utf8")
    } catch {
      continue
    }
    for (const row of text.trim().split("\n").slice(1)) {
      const [, local = "", , state, , , , , , inode] = row.trim().split(/\s+/)
      if (parseInt(local.split(":")[1] ?? "", 16) === port && state !== "0A" && inode !== "0") held++
    }
  }
  return held
}

const open = () =>
  new Promise<Socket>((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true }, () => resolve(socket))
    socket.on("error", reject)
  })

describe("connections", () => {
  it("sockets that never send a byte are closed by the server", async () => {
    const sockets = await Promise.all(Array.from({ length: 50 }, open))
    const answers = await Promise.all(sockets.map(closedByServer))
    // each is told why, in our error body, when it is still there to read it
    for (const answer of answers) if (answer !== "") expect(answer).toMatch(/^HTTP\/1\.1 408[^]*"request_timeout"/)
    // and the server still serves
    expect((await podium.request("GET", "/healthz")).status).toBe(200)
  }, 30_000)

  it("nor held half-open for clients that never read nor close", async () => {
    const sockets = await Promise.all(Array.from({ length: 50 }, open)) // paused: they read nothing
    const poll = async (until: () => boolean) => {
      while (!until()) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    await poll(() => heldByServer() >= 50) // accepted
    await poll(() => heldByServer() === 0) // and let go
    for (const socket of sockets) socket.destroy()
  }, 30_000)

  it("an idle keep-alive connection is closed after the keep-alive time", async () => {
    const socket = await open()
    const closed = closedByServer(socket)
    socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n")
    const answer = await closed
    expect(answer).toMatch(/^HTTP\/1\.1 200/)
    expect(answer).toMatch(/keep-alive/i)
  }, 4_000)

  it("a request that arrives slowly but steadily, past the headers time, is answered", async () => {
    const token = await session("slow-caller")
    const body = JSON.stringify({ name: "slow", dataset_type: "PUSH" })
    const socket = await open()
    const closed = closedByServer(socket)
    socket.write(
      `POST /api/leaderboards HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`
    )
    // the body in pieces over about three times the headers timeout
    for (const piece of body.match(/.{1,10}/g)!) {
      await new Promise((resolve) => setTimeout(resolve, 300))
      socket.write(piece)
    }
    const answer = await closed
    expect(answer).toMatch(/^HTTP\/1\.1 201/)
    expect(answer).toContain("\"slow\"")
  }, 30_000)
})
