import { randomUUID } from "node:crypto"
import { DateTime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import type { ModelId } from "@podium/domain/shared"
import { type FineTuneFake, startFineTuneFake } from "./fakes/FineTuneFake.ts"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { aCandidate, aLeaderboard, apiToken, servingLeaderboard, type SignedIn, signedIn } from "./support/Builders.ts"
import { type Caller, client, expectError, expectValidation } from "./support/Client.ts"
import { caller, deployedModel } from "./support/Models.ts"
import { operations } from "./support/OpenApiRoutes.ts"
import { type Podium, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"
import type { UsageBucket } from "@podium/adapters-http/inference/StatsApi"

// Dashboards (issue 31): calls, errors, spend and latency p50/p95 per bucket, read through HTTP and
// checked against what the test computes from the very rows it wrote (through the API and SQL).

const fineTuneKey = "sk-ft-31dash"
const hour = 3_600_000
const day = 24 * hour

let openAi: OpenAiFake
let tuner: FineTuneFake
let podium: Podium
let owner: SignedIn
let stranger: SignedIn
let reader: Caller
let leaderboard: LeaderboardId
let modelId: ModelId
/** The whole hour five hours before the test started: the bucket whose numbers are worked out by hand below. */
let handHour: number
let dayStart: number

/** One call as the test writes it. */
interface Call {
  readonly at: number
  readonly status: "success" | "error" | "cancelled"
  readonly latency: number | null
  readonly cost: number | null
}

const traceRows = (workspace: string, board: string, calls: ReadonlyArray<Call>, source = "inference") =>
  calls.map((c) => ({
    id: randomUUID(), workspace_id: workspace, leaderboard_id: board, source, messages: [], status: c.status,
    latency_ms: c.latency, cost_usd: c.cost, created_at: new Date(c.at).toISOString()
  }))

/** Traces in one INSERT (one statement: the rollup's trigger sees them together). */
const insertTraces = (rows: ReadonlyArray<Record<string, unknown>>) =>
  query(podium.databaseUrl, (sql) =>
    sql`INSERT INTO traces (id, workspace_id, leaderboard_id, source, messages, status, latency_ms, cost_usd, created_at)
        SELECT * FROM jsonb_to_recordset(${sql.json(rows)}) AS t(id uuid, workspace_id uuid, leaderboard_id uuid,
          source text, messages jsonb, status text, latency_ms double precision, cost_usd double precision, created_at timestamptz)`)

/** Inference logs in one INSERT, with the metadata the service writes. */
const insertLogs = (model: string, workspace: string, calls: ReadonlyArray<Call>) =>
  query(podium.databaseUrl, (sql) =>
    sql`INSERT INTO model_inference_logs (id, model_id, workspace_id, version_id, "timestamp", input_message, output_messages,
          traces, metadata, created_at)
        SELECT id, model_id, workspace_id, version_id, created_at, '{}', '{}', '{}', metadata, created_at
        FROM jsonb_to_recordset(${sql.json(calls.map((c) => ({
          id: randomUUID(), model_id: model, workspace_id: workspace, version_id: randomUUID(),
          metadata: { status: c.status, latency_ms: c.latency, cost_usd: c.cost, usage: null }, created_at: new Date(c.at).toISOString()
        })))}) AS t(id uuid, model_id uuid, workspace_id uuid, version_id uuid, metadata jsonb, created_at timestamptz)`)

const workspaceOf = async (board: string) =>
  (await query(podium.databaseUrl, (sql) => sql`SELECT workspace_id::text AS w FROM leaderboards WHERE id = ${board}`))[0]!["w"] as string

/** What was recorded, read back as stored: the leaderboard's inference traces, or the model's logs. */
const storedTraces = async (board: string): Promise<Array<Call>> =>
  (await query(podium.databaseUrl, (sql) =>
    sql`SELECT created_at, status, latency_ms, cost_usd FROM traces WHERE leaderboard_id = ${board} AND source = 'inference'`))
    .map((r) => ({ at: (r["created_at"] as Date).getTime(), status: r["status"] as Call["status"], latency: r["latency_ms"] as number | null, cost: r["cost_usd"] as number | null }))
const storedLogs = async (model: string): Promise<Array<Call>> =>
  (await query(podium.databaseUrl, (sql) =>
    sql`SELECT created_at, metadata FROM model_inference_logs WHERE model_id = ${model}`))
    .map((r) => {
      const m = r["metadata"] as { status: Call["status"]; latency_ms?: number | null; cost_usd?: number | null }
      return { at: (r["created_at"] as Date).getTime(), status: m.status, latency: m.latency_ms ?? null, cost: m.cost_usd ?? null }
    })

/** percentile_cont: the value at rank p·(n−1) of the sorted values, interpolated between neighbours. */
const percentileCont = (values: ReadonlyArray<number>, p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const at = p * (sorted.length - 1)
  const low = Math.floor(at)
  const high = Math.ceil(at)
  return sorted[low]! + (at - low) * (sorted[high]! - sorted[low]!)
}

/** USD in pico-dollars, exactly: from a number the test wrote, or from the API's decimal string. */
const pico = (usd: number | string): bigint => {
  if (typeof usd === "number") return BigInt(Math.round(usd * 1e12))
  const [whole, fraction = ""] = usd.split(".")
  return BigInt(whole!) * 10n ** 12n + BigInt(fraction.padEnd(12, "0").slice(0, 12))
}

type Bucket = typeof UsageBucket.Type

/** A percentile the API estimates from 2%-wide latency bins, against the exact one (and its rounding to 0.01 ms). */
const expectNear = (got: number | null, exact: number, label: string) => {
  expect(got, label).not.toBeNull()
  expect(Math.abs(got! - exact), `${label}: ${got} against exact ${exact}`).toBeLessThanOrEqual(0.02 * (exact + 1) + 0.005)
}

/** Every bucket of the answer against the calls that fall in it, as the test counts them. */
const expectSeries = (buckets: ReadonlyArray<Bucket>, step: number, calls: ReadonlyArray<Call>, label: string) => {
  for (const bucket of buckets) {
    const start = DateTime.toEpochMillis(bucket.start)
    const inside = calls.filter((c) => c.at >= start && c.at < start + step)
    const where = `${label} ${DateTime.formatIso(bucket.start)}`
    expect(bucket.calls, where).toBe(inside.length)
    expect(bucket.errors, where).toBe(inside.filter((c) => c.status === "error").length)
    expect(pico(bucket.spend_usd), where).toBe(inside.reduce((sum, c) => sum + pico(c.cost ?? 0), 0n))
    const timed = inside.flatMap((c) => c.latency === null ? [] : [c.latency])
    if (timed.length === 0) {
      expect([bucket.latency_p50_ms, bucket.latency_p95_ms], where).toEqual([null, null])
    } else {
      expectNear(bucket.latency_p50_ms, percentileCont(timed, 0.5), `${where} p50`)
      expectNear(bucket.latency_p95_ms, percentileCont(timed, 0.95), `${where} p95`)
    }
  }
  // the calls of the window are all somewhere
  const first = DateTime.toEpochMillis(buckets[0]!.start)
  expect(buckets.reduce((n, b) => n + b.calls, 0), label).toBe(calls.filter((c) => c.at >= first).length)
}

const windows = [["24h", "hour", 24, hour], ["7d", "day", 7, day], ["7d", "hour", 168, hour], ["30d", "day", 30, day]] as const

beforeAll(async () => {
  openAi = await startOpenAiFake()
  tuner = await startFineTuneFake({ apiKey: fineTuneKey })
  tuner.answer = () => "tuned"
  podium = await startPodium({
    FINE_TUNE_BASE_URL: tuner.baseUrl,
    FINE_TUNE_API_KEY: fineTuneKey,
    FINE_TUNE_BASE_MODELS: "base-model",
    FINE_TUNE_POLL_INTERVAL_MS: "50"
  })
  owner = await signedIn(podium, "dashboards-owner")
  stranger = await signedIn(podium, "dashboards-stranger")
  reader = client(podium, await apiToken(owner.api, ["leaderboards:read", "models:read"]))
  const started = Date.now()
  handHour = Math.floor(started / hour) * hour - 5 * hour
  dayStart = Math.floor(started / day) * day

  // three calls through the API, traced by the service's own writer
  leaderboard = (await servingLeaderboard(owner.api, aCandidate(openAi.url), aLeaderboard({ name: "dashboard" }))).id
  for (const input of ["one", "two", "three"]) {
    await owner.api((c) => c.inference.infer({ params: { leaderboard_id: leaderboard }, payload: { input } }))
  }
  for (let tries = 0; (await storedTraces(leaderboard)).length < 3; tries++) {
    if (tries > 200) throw new Error("the inference traces were not written")
    await new Promise((resolve) => setTimeout(resolve, 25))
  }

  // and calls written with SQL at chosen times, in two statements (the second adds to the first's rollup rows)
  const workspace = await workspaceOf(leaderboard)
  const other = (await owner.api((c) => c.leaderboards.create({ payload: aLeaderboard({ name: "other" }) }))).leaderboard.id
  const strangers = (await stranger.api((c) => c.leaderboards.create({ payload: aLeaderboard({ name: "stranger's" }) }))).leaderboard.id
  const threeDaysAgo: Array<Call> = Array.from({ length: 50 }, (_, i) => ({
    at: dayStart - 3 * day + 6 * hour + i * 60_000,
    status: i % 10 === 0 ? "error" : "success",
    latency: Math.round(10 * 1.13 ** i * 1000) / 1000,
    cost: (i + 1) / 1e6
  }))
  await insertTraces([
    ...traceRows(workspace, leaderboard, [
      { at: handHour + 60_000, status: "success", latency: 100, cost: 0.001 },
      { at: handHour + 120_000, status: "error", latency: 200, cost: 0.0025 },
      ...threeDaysAgo
    ]),
    // not the leaderboard's inference: a run's trace, another leaderboard's, another workspace's
    ...traceRows(workspace, leaderboard, [{ at: handHour + 60_000, status: "success", latency: 5, cost: 1 }], "run"),
    ...traceRows(workspace, other, [{ at: handHour + 60_000, status: "success", latency: 5, cost: 1 }]),
    ...traceRows(await workspaceOf(strangers), strangers, [{ at: handHour + 60_000, status: "success", latency: 5, cost: 1 }])
  ])
  await insertTraces(traceRows(workspace, leaderboard, [
    { at: handHour + 180_000, status: "success", latency: 300, cost: 0.0001 },
    { at: handHour + 240_000, status: "cancelled", latency: 400, cost: null },
    { at: handHour + 3 * hour + 600_000, status: "error", latency: null, cost: 0.5 },
    ...Array.from({ length: 5 }, (_, i): Call => ({ at: dayStart - 20 * day + hour + i, status: "success", latency: 1000 + i, cost: 0.01 })),
    { at: dayStart - 40 * day, status: "success", latency: 1, cost: 1 }
  ]))

  // a deployed model: two calls through the API (logged by the service), and logs written with SQL
  const deployed = await deployedModel(podium, owner)
  modelId = deployed.modelId as ModelId
  const inferenceToken = await apiToken(owner.api, ["models:inference"])
  for (const content of ["a", "b"]) {
    const answer = await caller(podium, owner)("POST", `/v1/models/${modelId}/inference`, { messages: [{ role: "user", content }] }, inferenceToken)
    expect(answer.status).toBe(200)
  }
  for (let tries = 0; (await storedLogs(modelId)).length < 2; tries++) {
    if (tries > 200) throw new Error("the inference logs were not written")
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  await insertLogs(modelId, owner.workspace, [
    { at: handHour + 60_000, status: "success", latency: 100, cost: 0.001 },
    { at: handHour + 120_000, status: "error", latency: 200, cost: 0.0025 },
    { at: dayStart - 2 * day + hour, status: "success", latency: 42.5, cost: 0.000001 },
    { at: dayStart - 2 * day + hour, status: "error", latency: null, cost: null }
  ])
}, 180_000)
afterAll(async () => {
  await podium.stop()
  await openAi.close()
  await tuner.close()
})

const leaderboardStats = (query: { window?: "24h" | "7d" | "30d"; bucket?: "hour" | "day" }, api: Caller = reader, id = leaderboard) =>
  api((c) => c.stats.leaderboard({ params: { leaderboard_id: id }, query }))
const modelStats = (query: { window?: "24h" | "7d" | "30d"; bucket?: "hour" | "day" }, api: Caller = reader, id = modelId) =>
  api((c) => c.stats.model({ params: { model_id: id }, query }))

describe("a leaderboard's dashboard", () => {
  it("counts each bucket's calls, errors, spend and latency percentiles from its inference traces, for every window", async () => {
    const calls = await storedTraces(leaderboard)
    expect(calls).toHaveLength(3 + 4 + 50 + 1 + 5 + 1)
    for (const [window, bucket, count, step] of windows) {
      const stats = await leaderboardStats({ window, bucket })
      expect(stats).toMatchObject({ leaderboard_id: leaderboard, window, bucket })
      expect(stats.buckets).toHaveLength(count)
      expect(stats.buckets[0]!.start).toEqual(stats.from)
      for (const [i, b] of stats.buckets.entries()) expect(DateTime.toEpochMillis(b.start)).toBe(DateTime.toEpochMillis(stats.from) + i * step)
      // the last bucket holds the time of reading
      expect(DateTime.toEpochMillis(stats.to) - DateTime.toEpochMillis(stats.buckets.at(-1)!.start)).toBeLessThan(step)
      expectSeries(stats.buckets, step, calls, `${window}/${bucket}`)
    }
  })

  it("works out the hand-made hour: 4 calls, 1 error, $0.0036, p50 250 ms, p95 385 ms", async () => {
    const { buckets } = await leaderboardStats({ window: "24h" })
    const handMade = buckets.find((b) => DateTime.toEpochMillis(b.start) === handHour)
    expect(handMade).toMatchObject({ calls: 4, errors: 1, spend_usd: "0.0036" })
    expectNear(handMade!.latency_p50_ms, 250, "p50")
    expectNear(handMade!.latency_p95_ms, 385, "p95")
    // an hour of one untimed call: counted, no percentiles
    expect(buckets.find((b) => DateTime.toEpochMillis(b.start) === handHour + 3 * hour))
      .toMatchObject({ calls: 1, errors: 1, spend_usd: "0.5", latency_p50_ms: null, latency_p95_ms: null })
  })

  it("shows buckets without calls as zeros", async () => {
    const { buckets } = await leaderboardStats({ window: "30d" })
    const empty = buckets.filter((b) => b.calls === 0)
    // the calls fall on at most four days: today (the API's), today or yesterday (the hand-made hours), 3 and 20 days ago
    expect(empty.length).toBeGreaterThanOrEqual(26)
    for (const b of empty) expect(b).toEqual({ start: b.start, calls: 0, errors: 0, spend_usd: "0", latency_p50_ms: null, latency_p95_ms: null })
  })

  it("defaults to the last 24 hours by the hour, and 7 days by the day", async () => {
    expect(await leaderboardStats({})).toMatchObject({ window: "24h", bucket: "hour" })
    expect((await leaderboardStats({ window: "7d" }))).toMatchObject({ window: "7d", bucket: "day" })
  })
})

describe("a model's dashboard", () => {
  it("counts the model's inference logs, those the service wrote and those written with SQL, for every window", async () => {
    const calls = await storedLogs(modelId)
    expect(calls).toHaveLength(2 + 4)
    for (const [window, bucket, count, step] of windows) {
      const stats = await modelStats({ window, bucket })
      expect(stats).toMatchObject({ model_id: modelId, window, bucket })
      expect(stats.buckets).toHaveLength(count)
      expectSeries(stats.buckets, step, calls, `model ${window}/${bucket}`)
    }
    const { buckets } = await modelStats({ window: "7d", bucket: "day" })
    expect(buckets.find((b) => DateTime.toEpochMillis(b.start) === dayStart - 2 * day))
      .toMatchObject({ calls: 2, errors: 1, spend_usd: "0.000001" })
  })
})

describe("refusals", () => {
  it("400 for a window or bucket it does not know, and for a bucket the window does not take", async () => {
    const bad = (path: string) => podium.request("GET", path, { token: owner.session })
    for (const [path, field] of [
      [`/api/leaderboards/${leaderboard}/stats?window=1y`, "window"],
      [`/api/leaderboards/${leaderboard}/stats?window=7d&bucket=week`, "bucket"],
      [`/api/models/${modelId}/stats?window=48h`, "window"]
    ] as const) {
      const reply = await bad(path)
      expect(reply.status, path).toBe(400)
      expect(reply.body.error.code).toBe("validation_failed")
      expect(reply.body.error.details.issues[0].path).toEqual(["query", field])
    }
    await expectValidation(leaderboardStats({ window: "24h", bucket: "day" }), ["query", "bucket"])
    await expectValidation(leaderboardStats({ window: "30d", bucket: "hour" }), ["query", "bucket"])
    await expectValidation(modelStats({ window: "30d", bucket: "hour" }), ["query", "bucket"])
  })

  it("404 for another workspace's leaderboard or model, and for one that does not exist", async () => {
    await expectError(leaderboardStats({}, stranger.api), 404, "not_found")
    await expectError(modelStats({}, stranger.api), 404, "not_found")
    const strangerToken = client(podium, await apiToken(stranger.api, ["leaderboards:read", "models:read"]))
    await expectError(leaderboardStats({}, strangerToken), 404, "not_found")
    await expectError(modelStats({}, strangerToken), 404, "not_found")
    await expectError(leaderboardStats({}, reader, randomUUID() as LeaderboardId), 404, "not_found")
    await expectError(modelStats({}, reader, randomUUID() as ModelId), 404, "not_found")
  })

  it("403 for an API token without the read scope of the leaderboard or model", async () => {
    const modelsOnly = client(podium, await apiToken(owner.api, ["models:read"]))
    const leaderboardsOnly = client(podium, await apiToken(owner.api, ["leaderboards:read"]))
    await expectError(leaderboardStats({}, modelsOnly), 403, "insufficient_scope")
    await expectError(modelStats({}, leaderboardsOnly), 403, "insufficient_scope")
    expect((await leaderboardStats({}, leaderboardsOnly)).buckets).toHaveLength(24)
    expect((await modelStats({}, modelsOnly)).buckets).toHaveLength(24)
  })

  it("401 without a credential", async () => {
    expect((await podium.request("GET", `/api/leaderboards/${leaderboard}/stats`)).status).toBe(401)
  })

  it("are in the OpenAPI document with their scopes", async () => {
    const routes = await operations(podium)
    const scopeOf = (path: string) => routes.find((r) => r.method === "GET" && r.path === path)?.requiredScope
    expect(scopeOf("/api/leaderboards/{leaderboard_id}/stats")).toBe("leaderboards:read")
    expect(scopeOf("/api/models/{model_id}/stats")).toBe("models:read")
  })
})
