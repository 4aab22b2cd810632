import { afterAll, beforeAll, expect, it } from "vitest"
import { startTcpProxy, type TcpProxy } from "./fakes/TcpProxy.ts"
import { client, expectError } from "./support/Client.ts"
import { freshDatabaseUrl } from "./support/database.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

let proxy: TcpProxy
let podium: Podium

beforeAll(async () => {
  const direct = new URL(await freshDatabaseUrl())
  proxy = await startTcpProxy(direct.hostname, Number(direct.port || 5432))
  direct.host = `127.0.0.1:${proxy.port}`
  podium = await startPodium({ DATABASE_URL: direct.href })
})
afterAll(async () => {
  proxy.resume()
  await podium.stop()
  await proxy.close()
})

it("answers 503 while the database does not answer, and 200 again after", async () => {
  const check = () => client(podium)((c) => c.health.check())
  expect(await check()).toMatchObject({ ok: true, database: "up" })
  proxy.cut()
  const down = await expectError(check(), 503, "database_unavailable")
  expect(down.body).toMatchObject({
    ok: false,
    service: "podium",
    database: "down",
    error: { code: "database_unavailable" }
  })
  proxy.resume()
  await expect.poll(() => check().then(() => "up", () => "down"), { timeout: 10_000 }).toBe("up")
})

// `/readyz` for a load balancer (issue 32): 200 while the instance takes traffic, 503 with the
// error body while its database does not answer (the relay in front of PostgreSQL is cut), 200
// again once it does. The drain's 503 is in drain.test.ts (it needs a SIGTERM), the start's in
// packages/server/src/Readyz.test.ts.

const readyz = (method = "GET") => fetch(`${podium.url}/readyz`, { method, signal: AbortSignal.timeout(5_000) })
const status = () => readyz().then((r) => r.status, () => 0)

it("answers 200 without a credential while the instance takes traffic, and HEAD the same without a body", async () => {
  const response = await readyz()
  expect(response.status).toBe(200)
  expect(response.headers.get("content-type")).toBe("application/json")
  expect(response.headers.get("cache-control")).toBe("no-store")
  expect(response.headers.get("x-content-type-options")).toBe("nosniff")
  expect(await response.json()).toEqual({ ok: true, status: "ready" })
  const head = await readyz("HEAD")
  expect(head.status).toBe(200)
  expect(await head.text()).toBe("")
})

it("is no route for other methods: the router answers them with its own error", async () => {
  const response = await readyz("POST")
  expect(response.status).toBeGreaterThanOrEqual(400)
  expect(response.status).toBeLessThan(500)
  expect(await response.json()).toMatchObject({ error: { code: expect.any(String) } })
})

it("answers 503 while the database does not answer, within a short time, and 200 again once it does", async () => {
  proxy.cut()
  await expect.poll(status, { timeout: 10_000, interval: 100 }).toBe(503)
  const started = Date.now()
  const down = await readyz()
  // the check has a one-second limit (a probe never waits on a pool that cannot connect)
  expect(Date.now() - started).toBeLessThan(2_500)
  expect(down.status).toBe(503)
  expect(await down.json()).toEqual({
    ok: false,
    status: "database_unavailable",
    error: { code: "not_ready", message: "The database does not answer" }
  })
  proxy.resume()
  await expect.poll(status, { timeout: 15_000, interval: 200 }).toBe(200)
}, 40_000)
