import { once } from "node:events"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "vitest"
import { createHoldingServer } from "./HoldingServer.ts"
import { makeReadyz, type ReadyState } from "./Readyz.ts"

/** A holding server with `/readyz` as its probe and no application handler yet (as while starting). */
const serving = async (state: ReadyState, now?: () => number) => {
  const server = createHoldingServer({}, { route: undefined, probe: makeReadyz(state, now === undefined ? {} : { now }) })
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/readyz`
  const get = async () => {
    const response = await fetch(url)
    return { status: response.status, body: await response.json() as { status: string }, connection: response.headers.get("connection") }
  }
  return { server, get }
}

describe("/readyz", () => {
  it("answers 503 starting before the application handler exists, then 200 once started", async () => {
    const state: ReadyState = { started: false, draining: false, database: async () => true }
    const { get, server } = await serving(state)
    expect(await get()).toMatchObject({ status: 503, body: { status: "starting", error: { code: "not_ready" } } })
    state.started = true
    expect(await get()).toMatchObject({ status: 200, body: { ok: true, status: "ready" } })
    server.close()
  })

  it("answers 503 draining with Connection: close, without asking the database", async () => {
    let asked = 0
    const state: ReadyState = { started: true, draining: true, database: async () => (asked++, true) }
    const { get, server } = await serving(state)
    expect(await get()).toMatchObject({ status: 503, body: { status: "draining" }, connection: "close" })
    expect(asked).toBe(0)
    server.close()
  })

  it("asks the database once for probes that come together, and again only a second later", async () => {
    let asked = 0
    let clock = 0
    let up = true
    const state: ReadyState = {
      started: true,
      draining: false,
      database: () => (asked++, new Promise((resolve) => setTimeout(() => resolve(up), 50)))
    }
    const { get, server } = await serving(state, () => clock)
    const answers = await Promise.all(Array.from({ length: 20 }, get))
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200))
    expect(asked).toBe(1)
    up = false
    clock = 999
    expect((await get()).status).toBe(200) // the answer of a moment ago
    expect(asked).toBe(1)
    clock = 1_000
    expect(await get()).toMatchObject({ status: 503, body: { status: "database_unavailable" } })
    expect(asked).toBe(2)
    server.close()
  })

  it("counts a check that fails as the database not answering", async () => {
    const state: ReadyState = { started: true, draining: false, database: () => Promise.reject(new Error("refused")) }
    const { get, server } = await serving(state)
    expect(await get()).toMatchObject({ status: 503, body: { status: "database_unavailable" } })
    server.close()
  })
})
