import { afterAll, beforeAll, expect, it } from "vitest"
import { startTcpProxy, type TcpProxy } from "./fakes/TcpProxy.ts"
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
  expect((await podium.request("GET", "/healthz")).status).toBe(200)
  proxy.cut()
  const down = await podium.request("GET", "/healthz")
  expect(down.status).toBe(503)
  expect(down.body).toMatchObject({
    ok: false,
    service: "podium",
    database: "down",
    error: { code: "database_unavailable" }
  })
  proxy.resume()
  await expect.poll(async () => (await podium.request("GET", "/healthz")).status, { timeout: 10_000 }).toBe(200)
})
