import { randomBytes } from "node:crypto"
import { connect } from "node:net"
import { afterAll, beforeAll, expect, it } from "vitest"
import { latch, type ModelFake, startModelFake } from "./fakes/ModelFake.ts"
import { aCandidate, aLeaderboard, apiToken, servingLeaderboard, signedIn } from "./support/Builders.ts"
import { at, serveChild, stopChildren } from "./support/ChildPodium.ts"
import { freshDatabaseUrl } from "./support/database.ts"
import { sessionSecret } from "./support/Podium.ts"

// Graceful drain on SIGTERM (issue 32): the listener closes at once, `/readyz` says 503 on a
// connection still open, requests in flight (a plain answer at the front door, a stream at the
// router) finish with 200 and a whole body, and the process exits 0 within a bounded time.

let fake: ModelFake
beforeAll(async () => {
  fake = await startModelFake()
})
afterAll(async () => {
  stopChildren()
  await fake?.close()
})

/** Whether a TCP connection to the port is accepted. */
const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port })
    socket.once("connect", () => (socket.destroy(), resolve(true)))
    socket.once("error", () => resolve(false))
  })

/**
 * Sends `first` on a raw socket, then `second` on the same (kept-alive, pipelined) connection when
 * told, and resolves with everything read until the server closes it.
 */
const pipelined = (port: number, first: string) => {
  const socket = connect({ host: "127.0.0.1", port })
  let received = ""
  socket.setEncoding("utf8")
  socket.on("data", (chunk) => received += chunk)
  const closed = new Promise<string>((resolve) => socket.once("close", () => resolve(received)))
  socket.on("error", () => {})
  socket.write(first)
  return { send: (second: string) => socket.write(second), closed }
}

it("SIGTERM: new connections are refused, /readyz is 503, requests in flight finish with 200, exit 0 in bounded time", async () => {
  const child = await serveChild({
    DATABASE_URL: await freshDatabaseUrl(),
    SESSION_JWT_SECRET: sessionSecret,
    SECRETS_KEY: randomBytes(32).toString("hex"),
    ALLOW_PRIVATE_NETWORK_TARGETS: "true",
    SHUTDOWN_GRACE_SECONDS: "20"
  })
  const port = Number(new URL(child.url).port)
  expect((await fetch(`${child.url}/readyz`)).status).toBe(200)

  const owner = await signedIn(at(child.url), "drain-owner")
  const hold = latch()
  fake.models["slow"] = (question) =>
    question === "stream" ? { stream: { deltas: ["one ", "two ", "three"], holds: [{ after: 1, gate: hold.gate }] } } : "a slow plain answer"
  const { id } = await servingLeaderboard(owner.api, aCandidate(`${fake.url}/v1`, { name: "slow", model_name: "slow" }), aLeaderboard({ name: "drain" }))
  const secret = await apiToken(owner.api, ["leaderboards:inference"])

  // in flight: a plain answer the upstream gives after 3 s (a Content-Length body: the front door),
  // and a stream the upstream holds open after its first event (a chunked body: the router)
  fake.delayMs = 3_000
  const seenBefore = fake.seen.length
  const plainBody = JSON.stringify({ input: "plain" })
  const plain = pipelined(
    port,
    `POST /v1/leaderboard/${id}/inference HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${secret}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(plainBody)}\r\n\r\n${plainBody}`
  )
  const streamed = fetch(`${child.url}/v1/leaderboard/${id}/inference`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: new Blob([JSON.stringify({ input: "stream", stream: true })]).stream(),
    duplex: "half"
  } as RequestInit)
  await expect.poll(() => fake.seen.length - seenBefore, { timeout: 10_000, interval: 20 }).toBe(2)

  const signalled = Date.now()
  child.child.kill("SIGTERM")
  // the listener closes at once
  await expect.poll(() => accepts(port), { timeout: 2_000, interval: 20 }).toBe(false)
  // a probe on a connection that is still open: 503, and the connection is not kept
  plain.send("GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")

  // the stream's first event came before the signal's effects; the rest after
  const response = await streamed
  expect(response.status).toBe(200)
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/)
  setTimeout(() => hold.release(), 500)
  const events = await response.text()
  expect(events).toContain("three")
  expect(events.trimEnd().endsWith("data: [DONE]")).toBe(true)

  const raw = await plain.closed
  const answers = raw.split(/(?=HTTP\/1\.1 )/)
  expect(answers[0]).toMatch(/^HTTP\/1\.1 200 /)
  expect(answers[0]).toContain("a slow plain answer")
  expect(answers[1]).toMatch(/^HTTP\/1\.1 503 /)
  expect(answers[1]!.toLowerCase()).toContain("connection: close")
  expect(answers[1]).toContain(`{"ok":false,"status":"draining","error":{"code":"not_ready"`)

  await child.exited
  expect(child.child.exitCode).toBe(0)
  // bounded: well within SHUTDOWN_GRACE_SECONDS once what was in flight is done
  expect(Date.now() - signalled).toBeLessThan(20_000)
  expect(child.output()).not.toMatch(/"level":"(ERROR|FATAL)"/)
}, 90_000)
