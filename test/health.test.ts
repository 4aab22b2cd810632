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
