import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FineTuneFake, startFineTuneFake } from "./fakes/FineTuneFake.ts"
import { startWebhookReceiver, type WebhookReceiver } from "./fakes/WebhookReceiver.ts"
import { apiToken, type SignedIn, signedIn } from "./support/Builders.ts"
import { caller, deployedModel } from "./support/Models.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

// The model.inference webhook: configuration rules, deliveries verified with the standardwebhooks
// package, retries, and nothing for a disabled webhook. Deliveries are looked for every 50 ms and
// retried after 50 ms, 100 ms, … here (WEBHOOK_POLL_INTERVAL_MS, WEBHOOK_RETRY_BASE_MS).

const fineTuneKey = "sk-ft-7b1e0d4c92a6"
let tuner: FineTuneFake
let podium: Podium
let owner: SignedIn
let call: ReturnType<typeof caller>
let inferenceToken: string

/** A loopback receiver: what it got, and what it answers next (a status per delivery, then 204). */
let receiver: WebhookReceiver

beforeAll(async () => {
  receiver = await startWebhookReceiver()
  tuner = await startFineTuneFake({ apiKey: fineTuneKey })
  tuner.answer = (model, messages) => model.startsWith("ft:") ? `tuned: ${messages.at(-1)!.content}` : "base"
  podium = await startPodium({
    FINE_TUNE_BASE_URL: tuner.baseUrl,
    FINE_TUNE_API_KEY: fineTuneKey,
    FINE_TUNE_BASE_MODELS: "base-model",
    FINE_TUNE_POLL_INTERVAL_MS: "50",
    WEBHOOK_POLL_INTERVAL_MS: "50",
    WEBHOOK_RETRY_BASE_MS: "50"
  })
  owner = await signedIn(podium, "webhooks-owner")
  call = caller(podium, owner)
  inferenceToken = await apiToken(owner.api, ["models:inference"])
})
afterAll(async () => {
  await podium.stop()
  await tuner.close()
  await receiver.close()
})

const infer = (modelId: string, content: string) =>
  call("POST", `/v1/models/${modelId}/inference`, { messages: [{ role: "user", content }] }, inferenceToken)

const logOf = async (modelId: string, logId: string) =>
  ((await call("GET", `/api/models/${modelId}/inference/logs`)).body.logs as Array<any>).find((l) => l.id === logId)

describe("the model.inference webhook", () => {
  let modelId: string
  let secret: string

  it("is configured with a URL without credentials; the secret is shown once; empty or null clears it", async () => {
    ({ modelId } = await deployedModel(podium, owner))
    const path = `/api/models/${modelId}/inference/webhook`
    for (const bad of ["https://user:pass@example.com/hook", "ftp://example.com/hook", "not a url"]) {
      const refused = await call("PATCH", path, { webhook_url: bad })
      expect(refused.status).toBe(400)
      expect(refused.body.error.code).toBe("validation_failed")
    }
    const set = await call("PATCH", path, { webhook_url: receiver.url, enabled: true })
    expect(set.status).toBe(200)
    expect(set.body).toMatchObject({ webhook_url: receiver.url, enabled: true })
    expect(set.body.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/)
    secret = set.body.secret
    // the same URL again (PUT or POST alike): no new secret, and the setting holds
    const again = await call("PUT", path, { webhook_url: receiver.url, enabled: true })
    expect(again.body).toEqual({ webhook_url: receiver.url, enabled: true })
    const cleared = await call("POST", path, { webhook_url: "" })
    expect(cleared.body).toEqual({ webhook_url: null, enabled: false })
    const reset = await call("PATCH", path, { webhook_url: receiver.url })
    expect(reset.body.secret).toMatch(/^whsec_/)
    expect(reset.body.secret).not.toBe(secret)
    secret = reset.body.secret
    expect((await call("PATCH", "/api/models/00000000-0000-4000-8000-000000000000/inference/webhook", { webhook_url: receiver.url })).status)
      .toBe(404)
  })

  it("rotates the secret of the webhook set on request, keeping its URL and whether it is on", async () => {
    const path = `/api/models/${modelId}/inference/webhook`
    const off = await call("PATCH", path, { enabled: false })
    expect(off.body).toEqual({ webhook_url: receiver.url, enabled: false })
    const rotated = await call("PATCH", path, { rotate_secret: true })
    expect(rotated.status).toBe(200)
    expect(rotated.body).toMatchObject({ webhook_url: receiver.url, enabled: false })
    expect(rotated.body.secret).toMatch(/^whsec_/)
    expect(rotated.body.secret).not.toBe(secret)
    secret = rotated.body.secret
    const on = await call("PATCH", path, { enabled: true })
    expect(on.body).toEqual({ webhook_url: receiver.url, enabled: true })
    // nothing to rotate without a webhook: a clear 400, and nothing set
    const none = (await deployedModel(podium, owner)).modelId
    const refused = await call("PATCH", `/api/models/${none}/inference/webhook`, { rotate_secret: true })
    expect(refused.status).toBe(400)
    expect(refused.body.error.code).toBe("validation_failed")
    expect((await call("GET", `/api/models/${none}/inference/webhook`)).status).toBe(404)
  })

  it("delivers each log once, signed per Standard Webhooks, and records the outcome on the log", async () => {
    receiver.received.length = 0
    const served = await infer(modelId, "hello")
    expect(served.status).toBe(200)
    const logId = served.headers.get("x-service-model-message-id")!
    await expect.poll(() => receiver.received.length, { timeout: 10_000, interval: 20 }).toBe(1)
    const [delivery] = receiver.received
    const payload = new Webhook(secret).verify(delivery!.body, delivery!.headers as Record<string, string>) as any
    expect(delivery!.headers["webhook-id"]).toBe(logId)
    expect(payload).toMatchObject({
      event: "model.inference",
      model: { id: modelId, business_id: owner.workspace, name: "openai model" },
      log: {
        id: logId,
        input_message: { messages: [{ role: "user", content: "hello" }] },
        output_messages: { messages: [{ role: "assistant", content: "tuned: hello" }] }
      }
    })
    expect(Date.parse(payload.delivered_at)).toBeGreaterThan(0)
    expect(() => new Webhook(`whsec_${Buffer.alloc(24, 1).toString("base64")}`).verify(delivery!.body, delivery!.headers as Record<string, string>))
      .toThrow()
    await expect.poll(async () => (await logOf(modelId, logId))?.metadata.webhook_delivery?.status, { timeout: 5_000, interval: 50 })
      .toBe("delivered")
    expect((await logOf(modelId, logId)).metadata.webhook_delivery).toMatchObject({ attempts: 1, last_status_code: 204, last_error: null })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(receiver.received).toHaveLength(1)
  })

  it("retries a receiver that fails twice, then succeeds, with the same webhook-id", async () => {
    receiver.received.length = 0
    receiver.answers.push(500, 503)
    const served = await infer(modelId, "again")
    const logId = served.headers.get("x-service-model-message-id")!
    await expect.poll(async () => (await logOf(modelId, logId))?.metadata.webhook_delivery?.status, { timeout: 10_000, interval: 50 })
      .toBe("delivered")
    expect((await logOf(modelId, logId)).metadata.webhook_delivery).toMatchObject({ attempts: 3, last_status_code: 204 })
    expect(receiver.received.map((r) => r.headers["webhook-id"])).toEqual([logId, logId, logId])
    for (const r of receiver.received) new Webhook(secret).verify(r.body, r.headers as Record<string, string>)
  })

  it("delivers nothing while the webhook is disabled", async () => {
    await call("PATCH", `/api/models/${modelId}/inference/webhook`, { enabled: false })
    receiver.received.length = 0
    const served = await infer(modelId, "quiet")
    expect(served.status).toBe(200)
    const logId = served.headers.get("x-service-model-message-id")!
    await expect.poll(async () => await logOf(modelId, logId), { timeout: 5_000, interval: 50 }).toBeDefined()
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(receiver.received).toEqual([])
    expect((await logOf(modelId, logId)).metadata.webhook_delivery).toBeUndefined()
  })
})
