import type { LeaderboardId } from "@podium/domain/leaderboards"
import type { ModelId } from "@podium/domain/models"
import type { Browser, Page } from "playwright-core"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { type ModelFake, startModelFake } from "./fakes/ModelFake.ts"
import { startWebhookReceiver, type WebhookReceiver } from "./fakes/WebhookReceiver.ts"
import { aLeaderboard, apiToken, type SignedIn, signedIn } from "./support/Builders.ts"
import { expectAccessible, launchBrowser, screenshot, signInThroughForm } from "./support/Browser.ts"
import { routerWithFewShotModel } from "./support/Models.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"

/**
 * Models in the web app, in real Chromium against the whole service: create a model on a
 * leaderboard, fine-tune it with the local `few_shot` trainer (a loopback router), deploy its
 * version, call it through the API, read its log and webhook delivery (a loopback receiver), and
 * stop it, through the page only (role-based selectors).
 */

const routerKey = "sk-or-v1-browser-models-router"
const owner = "browser-models-owner"
let fake: ModelFake
let podium: Podium
let browser: Browser
let api: SignedIn
let inferenceToken: string

let receiver: WebhookReceiver

/** A PUSH leaderboard whose consolidated rows are q0 … q{rows-1}, references a0 …. */
const pushLeaderboard = async (name: string, rows: number): Promise<LeaderboardId> => {
  const { id } = (await api.api((c) => c.leaderboards.create({ payload: aLeaderboard({ name, eval_type: "exact" }) }))).leaderboard
  const payload = Array.from({ length: rows }, (_, i) => ({ input: `q${i}`, expected: `a${i}` }))
  await api.api((c) => c.pushDatasets.push({ params: { leaderboard_id: id }, payload }))
  await api.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: id } }))
  return id
}

beforeAll(async () => {
  receiver = await startWebhookReceiver()
  ;[fake, browser] = await Promise.all([startModelFake({ key: routerKey }), launchBrowser(inject("podiumTestRunDir"))])
  routerWithFewShotModel(fake)
  podium = await startPodium({ ROUTER_BASE_URL: `${fake.url}/api/v1`, WEBHOOK_POLL_INTERVAL_MS: "50", WEBHOOK_RETRY_BASE_MS: "50" })
  api = await signedIn(podium, owner)
  // the few_shot trainer's base models are the workspace's router catalogue
  await api.api((c) => c.integrations.validate({ payload: { provider: "router", token: routerKey } }))
  await pushLeaderboard("Support answers", 100)
  await pushLeaderboard("Too small", 10)
  inferenceToken = await apiToken(api.api, ["models:inference"])
})
afterAll(async () => {
  await browser?.close()
  await podium?.stop()
  await fake?.close()
  await receiver?.close()
})

const signIn = async (): Promise<Page> => signInThroughForm(browser, podium.url, await session(owner))

const infer = (modelId: string, content: string) =>
  podium.request("POST", `/v1/models/${modelId}/inference`, { token: inferenceToken, json: { messages: [{ role: "user", content }] } })

/** The delivery of log `logId`, verified with `secret` (throws when the signature is not the secret's). */
const deliveryOf = async (logId: string, secret: string) => {
  await expect.poll(() => receiver.received.some((r) => r.headers["webhook-id"] === logId), { timeout: 10_000, interval: 20 }).toBe(true)
  const delivery = receiver.received.find((r) => r.headers["webhook-id"] === logId)!
  return new Webhook(secret).verify(delivery.body, delivery.headers as Record<string, string>) as { log: { id: string } }
}

describe("models in the web app", () => {
  it("creates a model, fine-tunes it, deploys it, shows its calls and their webhook deliveries, and stops it", async () => {
    const page = await signIn()
    await page.getByRole("link", { name: "Models", exact: true }).click()
    await page.getByRole("heading", { name: "Models", level: 1 }).waitFor()
    await page.getByText("No models yet").waitFor()
    await screenshot(page, "models")
    await expectAccessible(page, "the models page")

    // the assignment rule's refusal names the leaderboard and says what to do
    await page.getByLabel("Model name").fill("Support bot")
    await page.getByLabel("Base model").selectOption({ label: "Acme Small · prompt program (few-shot)" })
    await page.getByLabel("Too small").check()
    await page.getByLabel("Scheduled fine-tunes").selectOption("WEEKLY")
    await page.getByLabel(/^Auto update/).check()
    await page.getByLabel("Margin").fill("0.2")
    await page.getByRole("button", { name: "Create model" }).click()
    const refusal = page.getByRole("alert").filter({ hasText: "cannot be assigned" })
    await refusal.waitFor()
    const refused = await refusal.innerText()
    expect(refused).toContain("The leaderboard “Too small” cannot be assigned: its PUSH dataset has 10 consolidated rows")
    expect(refused).toContain("Push rows with references")
    expect(refused).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-/)
    // continuous learning waits for a first successful fine-tune
    expect(await page.getByLabel("Continuous learning").isDisabled()).toBe(true)
    await screenshot(page, "models-refused")
    await expectAccessible(page, "the models page with a refusal")

    await page.getByLabel("Too small").uncheck()
    await page.getByLabel("Support answers").check()
    await page.getByRole("button", { name: "Create model" }).click()
    await page.getByRole("heading", { name: "Support bot", level: 1 }).waitFor()
    const modelId = /#\/models\/([0-9a-f-]{36})$/.exec(page.url())![1]!
    // what was asked is what the API holds, the gate policy included
    const { model } = await api.api((c) => c.models.get({ params: { model_id: modelId as ModelId } }))
    expect(model).toMatchObject({ auto_update_model: true, fine_tune_schedule: { run: { type: "WEEKLY" } }, gate_policy: { margin: 0.2 } })
    await page.getByText("Serving: nothing (no version is active)").waitFor()
    await screenshot(page, "model")
    await expectAccessible(page, "a new model's page")

    // fine-tune: live on its own page until it succeeds, with the held-out scores and its events
    // the router answers slowly, so the run is seen under way: its status and events follow it live
    fake.delayMs = 150
    await page.getByLabel("Held-out share").fill("0.2")
    await page.getByRole("button", { name: "Start a fine-tune" }).click()
    await page.getByRole("heading", { name: "Fine-tune · running" }).waitFor()
    await page.getByRole("log", { name: "Fine-tune events" }).getByText("training data: 80 rows, 20 held out").waitFor()
    expect(await page.getByRole("heading", { name: "Fine-tune · running" }).count()).toBe(1)
    await page.getByRole("progressbar", { name: "Fine-tune under way" }).waitFor()
    await screenshot(page, "fine-tune-running")
    await expectAccessible(page, "a fine-tune under way")
    await page.getByRole("heading", { name: "Fine-tune · succeeded" }).waitFor({ timeout: 60_000 })
    fake.delayMs = 0
    const scores = page.getByRole("table", { name: "Held-out scores" })
    expect(await scores.getByRole("row").nth(1).innerText()).toMatch(/Base model \(Acme Small\)\s+0 of 20\s+0\.0%/)
    expect(await scores.getByRole("row").nth(2).innerText()).toMatch(/The new version\s+20 of 20\s+100\.0%/)
    expect(await page.getByRole("log", { name: "Fine-tune events" }).innerText()).toContain("held-out score 0.000 before, 1.000 after, on 20 rows")
    await screenshot(page, "fine-tune")
    await expectAccessible(page, "a finished fine-tune")

    // deploy version 1 with its options
    await page.getByRole("link", { name: "Deploy it from the model's page" }).click()
    await page.getByRole("heading", { name: "Support bot", level: 1 }).waitFor()
    const fineTunes = page.getByRole("table", { name: "Fine-tunes" })
    expect(await fineTunes.getByRole("row").nth(1).innerText()).toMatch(/succeeded\s+by hand\s+0\.0%\s*→?\s*base, then version\s+100\.0%/)
    // settings: continuous learning once fine-tuned, and a stricter gate, in one save
    await page.getByText("Settings", { exact: true }).click()
    await page.getByLabel("Continuous learning").check()
    await page.getByLabel("Shared rows needed").fill("30")
    await page.getByRole("button", { name: "Save settings" }).click()
    await page.getByRole("status").filter({ hasText: "Settings saved." }).waitFor()
    await page.getByText("margin 20.0 points, 30 shared rows").waitFor()
    expect(await page.getByRole("definition").filter({ hasText: /^on$/ }).count()).toBeGreaterThanOrEqual(1)
    expect((await api.api((c) => c.models.get({ params: { model_id: modelId as ModelId } }))).model)
      .toMatchObject({ continuous_self_learning: true, gate_policy: { alpha: 0.05, margin: 0.2, min_rows: 30 } })
    await expectAccessible(page, "a model with its settings open")
    await page.getByText("Settings", { exact: true }).click()

    await page.getByRole("button", { name: "Deploy version 1…" }).click()
    await page.getByLabel("Calls at once").fill("2")
    await page.getByLabel("Default max tokens").fill("64")
    await page.getByRole("button", { name: "Deploy version 1", exact: true }).click()
    const version = page.getByRole("article", { name: /^Version 1/ })
    await version.getByText("active: serving").waitFor({ timeout: 20_000 })
    await page.getByRole("status").filter({ hasText: "Version 1 is deployed and serving." }).waitFor()
    expect(await version.innerText()).toContain("2 calls at once, 64 tokens by default")
    await page.getByText("Serving: version 1").waitFor()
    const history = page.getByRole("table", { name: "Deployment history" })
    await history.getByText("Deployed").waitFor()
    expect(await history.getByRole("row").nth(1).innerText()).toMatch(/Deployed\s+version 1\s+a user/)

    // the webhook: set, its secret shown once
    await page.getByLabel("Webhook URL").fill(receiver.url)
    await page.getByRole("button", { name: "Set webhook" }).click()
    const secretField = page.getByLabel("Webhook signing secret")
    await secretField.waitFor()
    const secret = await secretField.inputValue()
    expect(secret).toMatch(/^whsec_/)
    await page.getByText("Podium shows it only this once").waitFor()

    // a call through the API: its log on the page, delivered to the receiver signed with the secret shown
    const served = await infer(modelId, "q7")
    expect(served.status).toBe(200)
    expect(served.body.choices[0].message.content).toBe("a7")
    const logId = served.headers.get("x-service-model-message-id")!
    expect((await deliveryOf(logId, secret)).log.id).toBe(logId)
    const logs = page.getByRole("table", { name: "Inference logs" })
    await expect.poll(async () => {
      await page.getByRole("button", { name: "Refresh logs" }).click()
      return logs.getByRole("row").count()
    }, { timeout: 10_000, interval: 300 }).toBe(2)
    await expect.poll(() => logs.getByRole("row").nth(1).innerText(), { timeout: 10_000 })
      .toMatch(/q7\s+a7\s+success\s+delivered\s*1 attempt, answered 204\s+version 1\s+\d+ ms/)
    // one page has no page buttons
    expect(await page.getByRole("button", { name: "Older logs" }).count()).toBe(0)
    await screenshot(page, "model-serving")
    await expectAccessible(page, "a deployed model with a log and its webhook")
    await page.setViewportSize({ width: 390, height: 844 })
    await screenshot(page, "model-serving-phone")
    await expectAccessible(page, "a deployed model on a phone")
    // nothing wider than the phone but the tables, which scroll in their own regions
    const root = page.locator("html")
    expect(await root.evaluate((html) => html.scrollWidth - html.clientWidth)).toBeLessThanOrEqual(0)
    await page.setViewportSize({ width: 1280, height: 900 })

    // rotating makes a new secret, shown once; deliveries are signed with it, not the old one
    await page.getByRole("button", { name: "I have kept it" }).click()
    expect(await page.getByLabel("Webhook signing secret").count()).toBe(0)
    await page.getByRole("button", { name: "Rotate secret" }).click()
    await page.getByRole("button", { name: "Confirm rotation" }).click()
    await page.getByRole("status").filter({ hasText: "Secret rotated" }).waitFor()
    const rotated = await page.getByLabel("Webhook signing secret").inputValue()
    expect(rotated).toMatch(/^whsec_/)
    expect(rotated).not.toBe(secret)
    const again = await infer(modelId, "q8")
    const againId = again.headers.get("x-service-model-message-id")!
    expect((await deliveryOf(againId, rotated)).log.id).toBe(againId)
    await expect(deliveryOf(againId, secret)).rejects.toThrow()

    // 21 more calls: the logs take two pages, older by cursor and back
    for (let i = 0; i < 21; i++) expect((await infer(modelId, `q${10 + i}`)).status).toBe(200)
    // logs are written a moment after their calls: all 23 first, so the pages are what they will stay
    await expect.poll(async () => (await api.api((c) => c.modelLogs.logs({ params: { model_id: modelId as ModelId }, query: {} }))).logs.length)
      .toBe(23)
    // two pages have page buttons
    await expect.poll(async () => {
      await page.getByRole("button", { name: "Refresh logs" }).click()
      return page.getByRole("button", { name: "Older logs" }).count()
    }, { timeout: 10_000, interval: 300 }).toBe(1)
    expect(await page.getByRole("button", { name: "Newer logs" }).isDisabled()).toBe(true)
    expect(await logs.getByRole("row").count()).toBe(21)
    await page.getByRole("button", { name: "Older logs" }).click()
    await expect.poll(() => logs.getByRole("row").count()).toBe(4)
    expect(await logs.innerText()).toContain("q7")
    expect(await page.getByRole("button", { name: "Older logs" }).isEnabled()).toBe(false)
    await page.getByRole("button", { name: "Newer logs" }).click()
    await expect.poll(() => logs.getByRole("row").count()).toBe(21)
    expect(await logs.getByRole("cell", { name: "q7", exact: true }).count()).toBe(0)

    // stop: the model serves nothing, and the history says so
    await page.getByRole("button", { name: "Stop version 1" }).click()
    await page.getByRole("button", { name: "Confirm stop" }).click()
    await page.getByRole("status").filter({ hasText: "Stopped version 1" }).waitFor()
    await version.getByText("stopped", { exact: true }).waitFor()
    await page.getByText("Serving: nothing (no version is active)").waitFor()
    await expect.poll(() => history.getByRole("row").nth(1).innerText()).toMatch(/Stopped\s+version 1/)
    const refusedCall = await infer(modelId, "q9")
    expect(refusedCall.status).toBe(409)
    expect(refusedCall.body.error.code).toBe("no_active_deployment")
    await screenshot(page, "model-stopped")
    await expectAccessible(page, "a stopped model")

    await page.getByRole("link", { name: "All models" }).click()
    const row = page.getByRole("table", { name: "Models" }).getByRole("row").nth(1)
    await row.waitFor()
    expect(await row.innerText()).toMatch(/Support bot\s+Acme Small\s+Support answers\s+yes\s+Every week/)
    await screenshot(page, "models-list")
    await expectAccessible(page, "the models list")
    await page.context().close()
  }, 180_000) // a fine-tune, a deployment and two dozen calls, with axe on each page
})
