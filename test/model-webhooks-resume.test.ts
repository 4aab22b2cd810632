/**
 * Webhook deliveries survive kill -9: the outbox is in Postgres. `podium serve` runs as a child
 * process whose receiver keeps failing; it is killed with SIGKILL after the first attempt and
 * started again on the same database, and the delivery goes on until the receiver accepts it.
 */
import { randomBytes } from "node:crypto"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { Webhook } from "standardwebhooks"
import { afterAll, describe, expect, it } from "vitest"
import { type FineTuneFake, startFineTuneFake } from "./fakes/FineTuneFake.ts"
import { apiToken, signedIn } from "./support/Builders.ts"
import { serveChild, stopChildren } from "./support/ChildPodium.ts"
import { freshDatabaseUrl } from "./support/database.ts"
import { caller, deployedModel } from "./support/Models.ts"
import { type Podium, request, sessionSecret } from "./support/Podium.ts"

const fineTuneKey = "sk-ft-9a4c2e6b80d1"
let tuner: FineTuneFake | undefined
const received: Array<{ readonly headers: IncomingHttpHeaders; readonly body: string }> = []
let status = 503
const receiver = createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") })
    res.writeHead(status).end()
  })
})
afterAll(async () => {
  stopChildren()
  await tuner?.close()
  await new Promise<void>((resolve) => receiver.close(() => resolve()))
})

/** What the test helpers need of a running server, for one in a child process. */
const podiumAt = (url: string) => ({ url, request: (method, path, options) => request(url, method, path, options) }) as Podium

describe("kill -9 with a webhook delivery pending", () => {
  it("delivers after a restart, with the same webhook-id, and records every attempt", async () => {
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
    tuner = await startFineTuneFake({ apiKey: fineTuneKey })
    tuner.answer = (model) => model.startsWith("ft:") ? "tuned" : "base"
    const env = {
      DATABASE_URL: await freshDatabaseUrl(),
      SESSION_JWT_SECRET: sessionSecret,
      SECRETS_KEY: randomBytes(32).toString("hex"),
      ALLOW_PRIVATE_NETWORK_TARGETS: "true",
      FINE_TUNE_BASE_URL: tuner.baseUrl,
      FINE_TUNE_API_KEY: fineTuneKey,
      FINE_TUNE_BASE_MODELS: "base-model",
      FINE_TUNE_POLL_INTERVAL_MS: "50",
      WEBHOOK_POLL_INTERVAL_MS: "50",
      WEBHOOK_RETRY_BASE_MS: "1000"
    }
    const first = await serveChild(env)
    const owner = await signedIn(podiumAt(first.url), "webhook-crash-owner")
    const { modelId } = await deployedModel(podiumAt(first.url), owner)
    const { secret } = (await caller(podiumAt(first.url), owner)("PATCH", `/api/models/${modelId}/inference/webhook`, { webhook_url: hook }))
      .body
    const token = await apiToken(owner.api, ["models:inference"])
    const served = await request(first.url, "POST", `/v1/models/${modelId}/inference`, { token, json: { messages: [{ role: "user", content: "hi" }] } })
    expect(served.status).toBe(200)
    const logId = served.headers.get("x-service-model-message-id")!

    // the first attempt failed and was recorded; the next is due a second later
    const logAt = (url: string) => async () =>
      ((await caller(podiumAt(url), owner)("GET", `/api/models/${modelId}/inference/logs`)).body.logs as Array<any>).find((l) => l.id === logId)
    await expect.poll(async () => (await logAt(first.url)())?.metadata.webhook_delivery, { timeout: 20_000, interval: 20 })
      .toMatchObject({ status: "pending", attempts: 1, last_status_code: 503 })
    first.child.kill("SIGKILL")
    await first.exited
    status = 204

    const second = await serveChild(env)
    const logOf = logAt(second.url)
    await expect.poll(async () => (await logOf())?.metadata.webhook_delivery?.status, { timeout: 60_000, interval: 100 }).toBe("delivered")
    const delivery = (await logOf()).metadata.webhook_delivery
    expect(delivery).toMatchObject({ last_status_code: 204, last_error: null })
    expect(received.length).toBeGreaterThanOrEqual(delivery.attempts)
    expect(delivery.attempts).toBeGreaterThanOrEqual(2)
    expect(new Set(received.map((r) => r.headers["webhook-id"]))).toEqual(new Set([logId]))
    const last = received.at(-1)!
    expect((new Webhook(secret).verify(last.body, last.headers as Record<string, string>) as { log: { id: string } }).log.id).toBe(logId)
  }, 180_000)
})
