import { randomUUID } from "node:crypto"
import { DateTime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { FineTuneRunId, ModelId, ModelVersionId } from "@podium/domain/shared"
import { type FineTuneFake, startFineTuneFake } from "./fakes/FineTuneFake.ts"
import { apiToken, type SignedIn, signedIn } from "./support/Builders.ts"
import { client, expectError, expectValidation } from "./support/Client.ts"
import { caller, deployedModel } from "./support/Models.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

// Reading back what was written (issue 29, models): one version, one fine-tune run, the webhook
// without its secret, and the inference logs by cursor and time.

const fineTuneKey = "sk-ft-29a1c0d7e4b3"
let tuner: FineTuneFake
let podium: Podium
let owner: SignedIn
let stranger: SignedIn
let call: ReturnType<typeof caller>
let inferenceToken: string
let modelId: ModelId
let versionId: ModelVersionId
let runId: FineTuneRunId
let strangerModel: ModelId

beforeAll(async () => {
  tuner = await startFineTuneFake({ apiKey: fineTuneKey })
  tuner.answer = (model, messages) => model.startsWith("ft:") ? `tuned: ${messages.at(-1)!.content}` : "base"
  podium = await startPodium({
    FINE_TUNE_BASE_URL: tuner.baseUrl,
    FINE_TUNE_API_KEY: fineTuneKey,
    FINE_TUNE_BASE_MODELS: "base-model",
    FINE_TUNE_POLL_INTERVAL_MS: "50"
  })
  owner = await signedIn(podium, "models-read-owner")
  stranger = await signedIn(podium, "models-read-stranger")
  call = caller(podium, owner)
  inferenceToken = await apiToken(owner.api, ["models:inference"])
  const deployed = await deployedModel(podium, owner)
  modelId = deployed.modelId as ModelId
  versionId = deployed.versionId as ModelVersionId
  const { runs } = await owner.api((c) => c.models.fineTuneRuns({ params: { model_id: modelId }, query: {} }))
  runId = runs[0]!.id as FineTuneRunId
  strangerModel = (await stranger.api((c) => c.models.create({ payload: { name: "stranger's" } }))).model.id
}, 120_000)
afterAll(async () => {
  await podium.stop()
  await tuner.close()
})

const infer = async (content: string) => {
  const answer = await call("POST", `/v1/models/${modelId}/inference`, { messages: [{ role: "user", content }] }, inferenceToken)
  expect(answer.status).toBe(200)
  return answer.headers.get("x-service-model-message-id")!
}

describe("one version and one fine-tune run", () => {
  it("answer as the lists show them", async () => {
    const { versions } = await owner.api((c) => c.models.versions({ params: { model_id: modelId } }))
    const { version } = await owner.api((c) => c.models.version({ params: { model_id: modelId, version_id: versionId } }))
    expect(version).toEqual(versions.find((v) => v.id === versionId))
    expect(version.deployment_status).toBe("active")

    const { runs } = await owner.api((c) => c.models.fineTuneRuns({ params: { model_id: modelId }, query: {} }))
    const { run } = await owner.api((c) => c.models.fineTuneRun({ params: { model_id: modelId, run_id: runId } }))
    expect(run).toEqual(runs.find((r) => r.id === runId))
    expect(run.version_id).toBe(versionId)
  })

  it("are 404 for unknown ids, another model's and another workspace's", async () => {
    const ownOther = (await owner.api((c) => c.models.create({ payload: { name: "no versions" } }))).model.id
    const cases: Array<[string, () => Promise<unknown>]> = [
      ["unknown version", () => owner.api((c) => c.models.version({ params: { model_id: modelId, version_id: randomUUID() as ModelVersionId } }))],
      ["unknown run", () => owner.api((c) => c.models.fineTuneRun({ params: { model_id: modelId, run_id: randomUUID() as FineTuneRunId } }))],
      ["unknown model", () => owner.api((c) => c.models.version({ params: { model_id: randomUUID() as ModelId, version_id: versionId } }))],
      ["version of another model", () => owner.api((c) => c.models.version({ params: { model_id: ownOther, version_id: versionId } }))],
      ["run of another model", () => owner.api((c) => c.models.fineTuneRun({ params: { model_id: ownOther, run_id: runId } }))],
      ["another workspace's model", () => stranger.api((c) => c.models.version({ params: { model_id: modelId, version_id: versionId } }))],
      ["another workspace's run", () => stranger.api((c) => c.models.fineTuneRun({ params: { model_id: modelId, run_id: runId } }))],
      ["its version under the stranger's model", () => stranger.api((c) => c.models.version({ params: { model_id: strangerModel, version_id: versionId } }))],
      ["its run under the stranger's model", () => stranger.api((c) => c.models.fineTuneRun({ params: { model_id: strangerModel, run_id: runId } }))]
    ]
    for (const [label, ask] of cases) await expectError(ask(), 404, "not_found", label)
    expect((await call("GET", `/api/models/${modelId}/versions/not-a-uuid`)).status).toBe(400)
  })

  it("need models:read", async () => {
    const token = await apiToken(owner.api, ["models:inference", "models:write"])
    const api = client(podium, token)
    const refused = await expectError(api((c) => c.models.version({ params: { model_id: modelId, version_id: versionId } })), 403, "insufficient_scope")
    expect(refused.error.details).toMatchObject({ required_scope: "models:read" })
    await expectError(api((c) => c.models.fineTuneRun({ params: { model_id: modelId, run_id: runId } })), 403, "insufficient_scope")
    await expectError(api((c) => c.modelLogs.getWebhook({ params: { model_id: modelId } })), 403, "insufficient_scope")
    await expectError(api((c) => c.modelLogs.logs({ params: { model_id: modelId }, query: {} })), 403, "insufficient_scope")
    const reader = client(podium, await apiToken(owner.api, ["models:read"]))
    expect((await reader((c) => c.models.version({ params: { model_id: modelId, version_id: versionId } }))).version.id).toBe(versionId)
  })
})

describe("the webhook, read back", () => {
  const secretLooking = /whsec_|secret"\s*:|sealed/i

  it("is 404 while none is set, then shows URL, state and when the secret was made, never the secret", async () => {
    await expectError(owner.api((c) => c.modelLogs.getWebhook({ params: { model_id: modelId } })), 404, "not_found")
    const before = Date.now()
    const set = await owner.api((c) => c.modelLogs.patchWebhook({ params: { model_id: modelId }, payload: { webhook_url: "https://hooks.example.com/a" } }))
    expect(set.secret).toMatch(/^whsec_/)

    const read = await call("GET", `/api/models/${modelId}/inference/webhook`)
    expect(read.status).toBe(200)
    expect(Object.keys(read.body).sort()).toEqual(["enabled", "secret_created_at", "updated_at", "webhook_url"])
    expect(read.text).not.toMatch(secretLooking)
    expect(read.text).not.toContain(set.secret!.slice("whsec_".length))
    const first = await owner.api((c) => c.modelLogs.getWebhook({ params: { model_id: modelId } }))
    expect(first).toMatchObject({ webhook_url: "https://hooks.example.com/a", enabled: true })
    expect(Date.parse(first.secret_created_at)).toBeGreaterThanOrEqual(before - 1000)

    // turning it off keeps the secret (and when it was made); a new URL makes a new one
    await new Promise((resolve) => setTimeout(resolve, 20))
    await owner.api((c) => c.modelLogs.patchWebhook({ params: { model_id: modelId }, payload: { enabled: false } }))
    const off = await owner.api((c) => c.modelLogs.getWebhook({ params: { model_id: modelId } }))
    expect(off).toMatchObject({ enabled: false, secret_created_at: first.secret_created_at })
    expect(Date.parse(off.updated_at)).toBeGreaterThan(Date.parse(first.updated_at))
    const moved = await owner.api((c) => c.modelLogs.putWebhook({ params: { model_id: modelId }, payload: { webhook_url: "https://hooks.example.com/b" } }))
    expect(moved.secret).toMatch(/^whsec_/)
    const renewed = await owner.api((c) => c.modelLogs.getWebhook({ params: { model_id: modelId } }))
    expect(renewed.webhook_url).toBe("https://hooks.example.com/b")
    expect(Date.parse(renewed.secret_created_at)).toBeGreaterThan(Date.parse(first.secret_created_at))

    await expectError(stranger.api((c) => c.modelLogs.getWebhook({ params: { model_id: modelId } })), 404, "not_found")
    await owner.api((c) => c.modelLogs.patchWebhook({ params: { model_id: modelId }, payload: { webhook_url: null } }))
    await expectError(owner.api((c) => c.modelLogs.getWebhook({ params: { model_id: modelId } })), 404, "not_found")
  })
})

describe("inference logs by cursor and time", () => {
  const page = (query: { limit?: number; cursor?: string; from?: DateTime.Utc; to?: DateTime.Utc }) =>
    owner.api((c) => c.modelLogs.logs({ params: { model_id: modelId }, query }))
  const allIds = async () => (await page({ limit: 100 })).logs.map((l) => l.id)

  it("pages newest first without repeats or gaps while new logs are written", async () => {
    const before = (await allIds()).length
    const written: Array<string> = []
    for (let i = 0; i < 6; i++) written.push(await infer(`page q${i}`))
    await expect.poll(async () => (await allIds()).length, { timeout: 10_000 }).toBe(before + 6)
    const snapshot = await allIds()

    const seen: Array<string> = []
    let cursor: string | undefined
    let pages = 0
    const during: Array<string> = []
    do {
      const got = await page({ limit: 2, ...(cursor === undefined ? {} : { cursor }) })
      seen.push(...got.logs.map((l) => l.id))
      cursor = got.next_cursor ?? undefined
      pages++
      if (pages <= 2) {
        during.push(await infer(`meanwhile ${pages}`))
        await expect.poll(async () => (await allIds()).length, { timeout: 10_000 }).toBe(snapshot.length + during.length)
      }
    } while (cursor !== undefined)

    expect(pages).toBe(Math.ceil(snapshot.length / 2))
    expect(pages).toBeGreaterThanOrEqual(3)
    expect(seen).toEqual(snapshot)
    expect(new Set(seen).size).toBe(seen.length)
    for (const id of written) expect(seen).toContain(id)
    for (const id of during) expect(seen).not.toContain(id)
    expect((await allIds()).slice(0, 2)).toEqual([...during].reverse())
  })

  it("keeps the logs from `from` (inclusive) to `to` (exclusive)", async () => {
    const { logs } = await page({ limit: 100 })
    expect(logs.length).toBeGreaterThanOrEqual(5)
    const times = [...new Set(logs.map((l) => l.created_at))]
    const at = (iso: string) => DateTime.makeUnsafe(iso)
    const [newest, , middle, , older] = times
    const ids = (got: { logs: ReadonlyArray<{ id: string }> }) => got.logs.map((l) => l.id)
    const made = (keep: (t: number) => boolean) => logs.filter((l) => keep(Date.parse(l.created_at))).map((l) => l.id)

    expect(ids(await page({ from: at(middle!) }))).toEqual(made((t) => t >= Date.parse(middle!)))
    expect(ids(await page({ to: at(middle!) }))).toEqual(made((t) => t < Date.parse(middle!)))
    const window = ids(await page({ from: at(older!), to: at(newest!) }))
    expect(window).toEqual(made((t) => t >= Date.parse(older!) && t < Date.parse(newest!)))
    expect(window.length).toBeGreaterThanOrEqual(3)
    expect(ids(await page({ from: at(middle!), to: at(middle!) }))).toEqual([])

    // paging inside a window stays inside it
    const first = await page({ from: at(older!), to: at(newest!), limit: 2 })
    const rest = await page({ from: at(older!), to: at(newest!), limit: 100, cursor: first.next_cursor! })
    expect([...ids(first), ...ids(rest)]).toEqual(window)

    // the query string's form: a date alone, an offset
    const raw = (query: string) => call("GET", `/api/models/${modelId}/inference/logs?${query}`)
    expect((await raw("from=2000-01-01")).body.logs.length).toBe(logs.length)
    expect((await raw("to=2000-01-01T00:00:00%2B01:00")).body.logs).toEqual([])
  })

  it("refuses bad times, from after to, a bad cursor and offset", async () => {
    const raw = (query: string) => call("GET", `/api/models/${modelId}/inference/logs?${query}`)
    for (const bad of ["from=yesterday", "from=2026-13-40", "to=2026-11-27T10:00:00", "to=1", "from=2026-11-27T25:00:00Z"]) {
      const refused = await raw(bad)
      expect(refused.status, bad).toBe(400)
      expect(refused.body.error.code, bad).toBe("validation_failed")
    }
    await expectValidation(page({ from: DateTime.makeUnsafe("2026-11-27T10:00:00Z"), to: DateTime.makeUnsafe("2026-11-27T09:59:59Z") }), ["query", "from"])
    expect((await raw("cursor=not-a-uuid")).status).toBe(400)
    expect((await page({ cursor: randomUUID() })).logs).toEqual([])
    for (const offset of ["offset=0", "offset=5"]) {
      const refused = await raw(offset)
      expect(refused.status).toBe(400)
      expect(refused.body.error.code).toBe("validation_failed")
      expect(refused.body.error.details.issues[0].path).toEqual(["query", "offset"])
      expect(JSON.stringify(refused.body.error)).toContain("page with cursor")
    }
    expect((await raw("limit=101")).status).toBe(400)
    expect((await raw("limit=0")).status).toBe(400)
    await expectError(stranger.api((c) => c.modelLogs.logs({ params: { model_id: modelId }, query: {} })), 404, "not_found")
  })
})
