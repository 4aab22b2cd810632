import { spawnSync } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FineTuneFake, startFineTuneFake } from "./fakes/FineTuneFake.ts"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { startWebhookReceiver, type WebhookReceiver } from "./fakes/WebhookReceiver.ts"
import { aCandidate, aLeaderboard, apiToken, type SignedIn, servingLeaderboard, signedIn } from "./support/Builders.ts"
import { caller, deployedModel } from "./support/Models.ts"
import { type Podium, startPodium } from "./support/Podium.ts"
import { freshDatabaseUrl } from "./support/database.ts"

// `GET /metrics` (packages/server/src/Metrics.ts): Effect's metrics in the Prometheus text format,
// behind METRICS_TOKEN (or METRICS_PUBLIC=true), checked against what was sent and with promtool.
// Three instances on one database: the front door with a metrics token, the router alone
// (`fastInference: false`) with public metrics by leaderboard too, and one with metrics off.

const metricsToken = "metrics-3c1f9a0e77b24d5e"
const fineTuneKey = "sk-ft-0e6d2b9a41c3"
const inferenceRoute = "/v1/leaderboard/:leaderboard_id/inference"
let upstream: OpenAiFake
let tuner: FineTuneFake
let receiver: WebhookReceiver
let front: Podium
let router: Podium
let off: Podium
let owner: SignedIn
let tenantToken: string
let leaderboard: string
/** Calls the budgeted token made before its budget was spent. */
let paid = 0

beforeAll(async () => {
  upstream = await startOpenAiFake()
  tuner = await startFineTuneFake({ apiKey: fineTuneKey })
  receiver = await startWebhookReceiver()
  const env = {
    DATABASE_URL: await freshDatabaseUrl(),
    FINE_TUNE_BASE_URL: tuner.baseUrl,
    FINE_TUNE_API_KEY: fineTuneKey,
    FINE_TUNE_BASE_MODELS: "base-model",
    FINE_TUNE_POLL_INTERVAL_MS: "50",
    // webhooks are delivered by the front-door instance alone (the others look once, at their start)
    WEBHOOK_POLL_INTERVAL_MS: "600000",
    WEBHOOK_RETRY_BASE_MS: "50"
  }
  front = await startPodium({ ...env, METRICS_TOKEN: metricsToken, WEBHOOK_POLL_INTERVAL_MS: "50" })
  router = await startPodium({ ...env, METRICS_PUBLIC: "true", METRICS_PER_LEADERBOARD: "true" }, { fastInference: false })
  off = await startPodium(env)
  owner = await signedIn(front, "metrics-owner")
  tenantToken = await apiToken(owner.api, ["leaderboards:inference"])
  leaderboard = (await servingLeaderboard(owner.api, aCandidate(`${upstream.url}/v1`))).id
})
afterAll(async () => {
  await Promise.all([front?.stop(), router?.stop(), off?.stop()])
  await upstream?.close()
  await tuner?.close()
  await receiver?.close()
})

/** A sample of the exposition: its name, labels and value. */
interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

const samplesOf = (text: string): ReadonlyArray<Sample> =>
  text.split("\n").filter((line) => line !== "" && !line.startsWith("#")).map((line) => {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null) throw new Error(`not a sample line: ${line}`)
    const labels = Object.fromEntries([...(match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]))
    return { name: match[1]!, labels, value: Number(match[3]) }
  })

/** The value of the sample `name` whose labels include `labels`; undefined when there is none. */
const valueOf = (samples: ReadonlyArray<Sample>, name: string, labels: Record<string, string>) => {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`)
  return found[0]?.value
}

const scrape = async (podium: Podium, token?: string) => {
  const reply = await podium.request("GET", "/metrics", token === undefined ? {} : { token })
  expect(reply.status).toBe(200)
  expect(reply.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
  return reply.text
}

/** The same requests to either transport: three answered inferences, one unknown leaderboard, one unknown path. */
const drive = async (podium: Podium) => {
  for (let i = 0; i < 3; i++) {
    const reply = await podium.request("POST", `/v1/leaderboard/${leaderboard}/inference`, { token: tenantToken, json: { question: `q${i}` } })
    expect(reply.status).toBe(200)
  }
  const missing = await podium.request("POST", `/v1/leaderboard/0190a8b2-0000-7000-8000-000000000000/inference`, {
    token: tenantToken,
    json: { question: "q" }
  })
  expect(missing.status).toBe(404)
  expect((await podium.request("GET", "/no/such/path/4711")).status).toBe(404)
}

const promtool = (text: string) => {
  const run = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" })
  if (run.error !== undefined) {
    throw new Error(
      "promtool is not installed: install Debian's prometheus package (`apt-get install -y prometheus`, see README \"Monitoring\") " +
        `to check the exposition (${run.error.message})`
    )
  }
  return run
}

describe("GET /metrics", () => {
  it("is off (404, as any unknown path) unless METRICS_TOKEN or METRICS_PUBLIC is set", async () => {
    const reply = await off.request("GET", "/metrics")
    expect(reply.status).toBe(404)
    expect(reply.body.error.code).toBe("not_found")
    expect((await off.request("GET", "/metrics", { token: tenantToken })).status).toBe(404)
  })

  it("asks for the metrics token, never a tenant's API token", async () => {
    for (const token of [undefined, "wrong-token", tenantToken, `${metricsToken}x`, metricsToken.slice(0, -1)]) {
      const reply = await front.request("GET", "/metrics", token === undefined ? {} : { token })
      expect(reply.status).toBe(401)
      expect(reply.body.error.code).toBe("unauthorized")
      expect(reply.headers.get("www-authenticate")).toMatch(/^Bearer/)
      expect(reply.text).not.toContain("podium_http")
    }
    expect((await front.request("GET", "/metrics", { headers: { authorization: `Basic ${metricsToken}` } })).status).toBe(401)
    expect((await front.request("GET", "/metrics", { token: metricsToken })).status).toBe(200)
    // public: no token needed
    expect((await router.request("GET", "/metrics")).status).toBe(200)
  })

  it("counts requests by route template, method and status alike through the front door and the router", async () => {
    await drive(front)
    await drive(router)
    for (const [podium, token] of [[front, metricsToken], [router, undefined]] as const) {
      const samples = samplesOf(await scrape(podium, token))
      const ok = { route: inferenceRoute, method: "POST", status: "200" }
      expect(valueOf(samples, "podium_http_requests_total", ok)).toBe(3)
      expect(valueOf(samples, "podium_http_request_duration_seconds_count", ok)).toBe(3)
      expect(valueOf(samples, "podium_http_request_duration_seconds_bucket", { ...ok, le: "+Inf" })).toBe(3)
      expect(valueOf(samples, "podium_http_request_duration_seconds_sum", ok)).toBeGreaterThan(0)
      expect(valueOf(samples, "podium_http_requests_total", { route: inferenceRoute, method: "POST", status: "404" })).toBe(1)
      expect(valueOf(samples, "podium_http_requests_total", { route: "unmatched", method: "GET", status: "404" })).toBe(1)
      // no raw URL or id in any label (but the leaderboard's, where METRICS_PER_LEADERBOARD asks for it)
      for (const sample of samples.filter((s) => !s.name.startsWith("podium_leaderboard_"))) {
        for (const value of Object.values(sample.labels)) {
          expect(value).not.toContain(leaderboard)
          expect(value).not.toContain("4711")
        }
      }
    }
  })

  it("counts upstream calls by platform, source and outcome, their tokens and cost, and budget refusals", async () => {
    // 500 output tokens at 20 USD per million: 0.01 a call; a budget of 0.015 is spent after a call or two
    const priced = (await servingLeaderboard(
      owner.api,
      aCandidate(`${upstream.url}/v1`, { name: "priced", input_price_per_m_tokens: 0, output_price_per_m_tokens: 20 }),
      aLeaderboard({ name: "priced" })
    )).id
    const budgeted = await apiToken(owner.api, ["leaderboards:inference"], { name: "budgeted", budget_limit: 0.015, budget_reset_interval: "daily" })
    const call = () => front.request("POST", `/v1/leaderboard/${priced}/inference`, { token: budgeted, json: { input: "hi", max_tokens: 500 } })
    let served = 0
    for (let status = 0; status !== 429 && served < 5;) {
      status = (await call()).status
      if (status === 200) served++
      else expect(status).toBe(429)
    }
    expect(served).toBeGreaterThanOrEqual(1)
    expect(served).toBeLessThanOrEqual(2)
    paid = served

    const samples = samplesOf(await scrape(front, metricsToken))
    const calls = { platform: "Custom", source: "inference" }
    // three calls from `drive`, the priced ones; the refused call reached no upstream
    expect(valueOf(samples, "podium_upstream_calls_total", { ...calls, outcome: "success" })).toBe(3 + served)
    expect(valueOf(samples, "podium_upstream_calls_total", { ...calls, outcome: "error" })).toBeUndefined()
    expect(valueOf(samples, "podium_upstream_call_duration_seconds_count", { ...calls, outcome: "success" })).toBe(3 + served)
    // the fake reports 1000 prompt and 500 completion tokens a call
    expect(valueOf(samples, "podium_upstream_tokens_total", { ...calls, kind: "input" })).toBe(1000 * (3 + served))
    expect(valueOf(samples, "podium_upstream_tokens_total", { ...calls, kind: "output" })).toBe(500 * (3 + served))
    expect(valueOf(samples, "podium_upstream_cost_usd_total", calls)).toBeCloseTo(0.01 * served, 10)
    expect(valueOf(samples, "podium_budget_refusals_total", {})).toBe(1)
    expect(valueOf(samples, "podium_http_requests_total", { route: inferenceRoute, method: "POST", status: "429" })).toBe(1)
    // no leaderboard label unless METRICS_PER_LEADERBOARD=true
    expect(samples.filter((sample) => "leaderboard_id" in sample.labels)).toEqual([])
    // the router instance counted its own three calls, and (METRICS_PER_LEADERBOARD=true) their tokens by leaderboard
    const routed = samplesOf(await scrape(router))
    expect(valueOf(routed, "podium_upstream_calls_total", { ...calls, outcome: "success" })).toBe(3)
    expect(valueOf(routed, "podium_budget_refusals_total", {})).toBe(0)
    expect(valueOf(routed, "podium_leaderboard_tokens_total", { leaderboard_id: leaderboard, kind: "input" })).toBe(3000)
    expect(valueOf(routed, "podium_leaderboard_tokens_total", { leaderboard_id: leaderboard, kind: "output" })).toBe(1500)
    expect(valueOf(routed, "podium_leaderboard_tokens_total", { leaderboard_id: priced, kind: "input" })).toBeUndefined()
  })

  it("shows the group commit's queue depth, batch write times and rows per writer", async () => {
    // traces are written just after the answers (group commit): wait for those of this instance's calls
    await expect.poll(async () =>
      valueOf(samplesOf(await scrape(front, metricsToken)), "podium_group_commit_rows_total", { writer: "trace" }), { timeout: 5_000 }).toBe(3 + paid)
    const samples = samplesOf(await scrape(front, metricsToken))
    expect(valueOf(samples, "podium_group_commit_queue_depth", { writer: "trace" })).toBe(0)
    expect(valueOf(samples, "podium_group_commit_flush_seconds_count", { writer: "trace" })).toBeGreaterThanOrEqual(1)
    expect(valueOf(samples, "podium_group_commit_queue_depth", { writer: "inference log" })).toBe(0)
  })

  it("counts webhook deliveries by outcome", async () => {
    const { modelId } = await deployedModel(front, owner)
    const call = caller(front, owner)
    expect((await call("PATCH", `/api/models/${modelId}/inference/webhook`, { webhook_url: receiver.url, enabled: true })).status).toBe(200)
    const modelToken = await apiToken(owner.api, ["models:inference"])
    receiver.answers.push(500) // the first attempt fails; the second (50 ms later) is delivered
    expect((await call("POST", `/v1/models/${modelId}/inference`, { messages: [{ role: "user", content: "q1" }] }, modelToken)).status).toBe(200)
    await expect.poll(async () =>
      valueOf(samplesOf(await scrape(front, metricsToken)), "podium_webhook_deliveries_total", { outcome: "delivered" }), { timeout: 10_000 }).toBe(1)
    const samples = samplesOf(await scrape(front, metricsToken))
    expect(valueOf(samples, "podium_webhook_deliveries_total", { outcome: "retrying" })).toBe(1)
    expect(valueOf(samples, "podium_webhook_deliveries_total", { outcome: "failed" })).toBe(0)
    expect(receiver.received.length).toBe(2)
    // the inference log went through its group commit
    expect(valueOf(samples, "podium_group_commit_rows_total", { writer: "inference log" })).toBeGreaterThanOrEqual(1)
  }, 60_000)

  it("passes promtool check metrics", async () => {
    const text = await scrape(front, metricsToken)
    const run = promtool(text)
    expect(run.stdout + run.stderr).toBe("")
    expect(run.status).toBe(0)
  })
})
