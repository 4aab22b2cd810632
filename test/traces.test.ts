import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import type { TraceSource } from "@podium/domain/inference"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { aCandidate, aLeaderboard, apiToken, servingLeaderboard, type SignedIn, signedIn } from "./support/Builders.ts"
import { type Caller, client, expectError, unchecked } from "./support/Client.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

let fake: OpenAiFake
let podium: Podium
let owner: SignedIn
let readerToken: string
let reader: Caller
let id: LeaderboardId
const runId = "0190a000-0000-7000-8000-0000000000aa"

beforeAll(async () => {
  fake = await startOpenAiFake()
  podium = await startPodium()
  owner = await signedIn(podium, "traces-owner")
  readerToken = await apiToken(owner.api, ["leaderboards:read"], { name: "reader" })
  reader = client(podium, readerToken)
  id = (await servingLeaderboard(owner.api, aCandidate(fake.url), aLeaderboard({ name: "t" }))).id
  for (let i = 0; i < 5; i++) {
    await owner.api((c) => c.inference.infer({ params: { leaderboard_id: id }, payload: { input: `q${i}` } }))
  }
  // Three traces of a run, written as the run work will write them.
  const [lb] = await query(podium.databaseUrl, (sql) => sql`SELECT workspace_id::text AS w FROM leaderboards WHERE id = ${id}`)
  for (let i = 0; i < 3; i++) {
    await query(podium.databaseUrl, (sql) =>
      sql`INSERT INTO traces (id, workspace_id, leaderboard_id, source, run_id, input, messages, status, created_at)
          VALUES (${`0190a000-0000-7000-8000-00000000000${i}`}, ${lb!["w"] as string}, ${id}, 'run', ${runId},
            ${`r${i}`}, '[]', 'success', now())`)
  }
  // Inference traces are written just after each response (group commit): wait for them.
  for (let tries = 0; tries < 200; tries++) {
    const [row] = await query(podium.databaseUrl, (sql) =>
      sql`SELECT count(*)::int AS n FROM traces WHERE leaderboard_id = ${id}`)
    if (row!["n"] === 8) break
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

type ExportQuery = {
  readonly limit?: number
  readonly offset?: number
  readonly batch_limit?: number
  readonly cursor?: string
  readonly source?: TraceSource
  readonly run_id?: string
}

/** The export as a TraceList (`format=json`). */
const exportJson = async (query: ExportQuery = {}, api: Caller = reader) => {
  const list = await api((c) => c.traces.export({ params: { leaderboard_id: id }, query: { ...query, format: "json" } }))
  if (typeof list === "string") throw new Error(`expected a TraceList, got ${list}`)
  return list
}
const inputs = (list: { readonly rows: ReadonlyArray<Record<string, unknown>> }) => list.rows.map((r) => r["input"])

describe("trace export", () => {
  it("json: the Trace list response, in creation order, with batches and paging", async () => {
    const all = await exportJson()
    expect(all).toMatchObject({
      leaderboard_id: id,
      count: 8,
      limit: 100,
      offset: 0,
      batch_count: 1,
      scanned_rows: 8,
      next_offset: null,
      next_cursor: null
    })
    expect(all.traces_url).toContain(`/v1/leaderboard/${id}/traces?format=jsonl`)
    const inference = all.rows.filter((r) => r["source"] === "inference")
    expect(inference.map((r) => r["input"])).toEqual(["q0", "q1", "q2", "q3", "q4"])
    expect(inference[0]).toMatchObject({ status: "success", output: "echo: q0", leaderboard_id: id })
    expect(inference[0]!["created_at"]).toMatch(/\.\d{3}Z$/)
    expect(inference[0]).not.toHaveProperty("workspace_id")

    // limit caps the rows; batch_limit is rows per round trip
    const paged = await exportJson({ limit: 5, batch_limit: 2, offset: 1 })
    expect(paged).toMatchObject({ count: 5, limit: 5, batch_count: 3, scanned_rows: 5, next_offset: 6 })
    expect(inputs(paged)).toEqual(inputs(all).slice(1, 6))
    expect(paged.next_cursor).toBe(all.rows[5]!["id"])
    const rest = await exportJson({ limit: 5, cursor: paged.next_cursor! })
    expect(rest).toMatchObject({ count: 2, batch_count: 1, next_offset: null, next_cursor: null })
    expect(inputs(rest)).toEqual(inputs(all).slice(6))
    // a page that ends exactly at the last row says so
    expect(await exportJson({ limit: 8 })).toMatchObject({ count: 8, next_cursor: null, next_offset: null })
    expect(await exportJson({ limit: 7 })).toMatchObject({ count: 7, next_cursor: all.rows[6]!["id"] })
  })

  it("filters by source and run_id", async () => {
    expect((await exportJson({ source: "inference" })).count).toBe(5)
    expect((await exportJson({ source: "run" })).count).toBe(3)
    expect(inputs(await exportJson({ run_id: runId }))).toEqual(["r0", "r1", "r2"])
    expect(await exportJson({ source: "manual" })).toMatchObject({ count: 0, batch_count: 0, rows: [] })
  })

  it("jsonl (default) and ndjson stream one object per line", async () => {
    // Content types and line-delimited bodies: the wire itself.
    for (const [params, type] of [["", "application/jsonl"], ["format=ndjson", "application/x-ndjson"]] as const) {
      const reply = await podium.request("GET", `/v1/leaderboard/${id}/traces?${params}`, { token: readerToken })
      expect(reply.status).toBe(200)
      expect(reply.headers.get("content-type")).toContain(type)
      const lines = reply.text.trimEnd().split("\n").map((line) => JSON.parse(line))
      expect(lines).toHaveLength(8)
      // the same traces as the json format's rows, value for value
      expect(lines).toEqual((await exportJson({})).rows)
    }
  })

  it("jsonl lines carry what json rows carry, however odd the values, page by page", async () => {
    const other = (await servingLeaderboard(owner.api, aCandidate(fake.url), aLeaderboard({ name: "odd values" }))).id
    const [lb] = await query(podium.databaseUrl, (sql) => sql`SELECT workspace_id::text AS w FROM leaderboards WHERE id = ${other}`)
    const odd = [
      { input: "quote \" backslash \\ tab \t newline \n ✓ 日本 😀 \u0001", latency: 0.1 + 0.2, cost: 1e-7, usage: { total_tokens: 7 } },
      { input: null, latency: 123456789.125, cost: 0, usage: { prompt_tokens: 1.5e21 } },
      { input: "", latency: null, cost: null, usage: null }
    ]
    for (const [i, trace] of odd.entries()) {
      await query(podium.databaseUrl, (sql) =>
        sql`INSERT INTO traces (id, workspace_id, leaderboard_id, source, input, messages, output, status, error, latency_ms,
              usage, cost_usd, created_at)
            VALUES (${`0190b000-0000-7000-8000-00000000000${i}`}, ${lb!["w"] as string}, ${other}, 'inference', ${trace.input},
              ${sql.json([{ role: "user", content: trace.input ?? "" }, { role: "assistant", content: "é" }])}, ${trace.input},
              'error', 'it "failed"', ${trace.latency}, ${trace.usage === null ? null : sql.json(trace.usage)}, ${trace.cost},
              '2026-01-02T03:04:05.678912Z')`)
    }
    const list = await reader((c) => c.traces.export({ params: { leaderboard_id: other }, query: { format: "json" } }))
    if (typeof list === "string") throw new Error("expected a TraceList")
    const rows = list.rows
    expect(rows).toHaveLength(3)
    expect(rows[0]).toMatchObject({ input: odd[0]!.input, latency_ms: 0.1 + 0.2, cost_usd: 1e-7, created_at: "2026-01-02T03:04:05.678Z" })
    let cursor: string | null = null
    const lines: Array<unknown> = []
    do {
      const reply = await podium.request(
        "GET",
        `/v1/leaderboard/${other}/traces?limit=2&batch_limit=1${cursor === null ? "" : `&cursor=${cursor}`}`,
        { token: readerToken }
      )
      lines.push(...reply.text.trimEnd().split("\n").map((line) => JSON.parse(line)))
      cursor = reply.headers.get("x-next-cursor")
    } while (cursor !== null)
    expect(lines).toEqual(rows)
  })

  it("rejects bad parameters and other callers", async () => {
    for (const params of ["format=xml", "batch_limit=0", "batch_limit=101", "limit=0", "limit=1001", "source=web", "run_id=x", "cursor=x"]) {
      // Queries the contract forbids: the typed client will not send them.
      const reply = unchecked(podium, "GET", `/v1/leaderboard/${id}/traces?${params}`, { token: readerToken })
      await expectError(reply, 400, "validation_failed", params)
    }
    const stranger = client(podium, await session("traces-stranger"))
    await expectError(exportJson({}, stranger), 404, "not_found")
    const serving = client(podium, await apiToken(owner.api, ["leaderboards:inference"], { name: "serving" }))
    await expectError(exportJson({}, serving), 403, "insufficient_scope")
  })

  it("exports 20,000 traces as JSONL page by page through X-Next-Cursor, each row once", async () => {
    const big = (await owner.api((c) => c.leaderboards.create({ payload: aLeaderboard({ name: "big" }) }))).leaderboard.id
    await query(podium.databaseUrl, (sql) =>
      sql`INSERT INTO traces (id, workspace_id, leaderboard_id, source, input, messages, output, status, created_at)
          SELECT gen_random_uuid(), l.workspace_id, l.id, 'inference', 'row ' || n, '[]', 'ok', 'success', now()
          FROM leaderboards l, generate_series(1, 20000) AS n WHERE l.id = ${big}`)
    const seen = new Set<string>()
    let cursor: string | null = null
    let pages = 0
    // Pages of a streamed JSONL body, chained by a header: the wire itself.
    do {
      const response: Response = await fetch(
        `${podium.url}/v1/leaderboard/${big}/traces?limit=1000&batch_limit=100${cursor === null ? "" : `&cursor=${cursor}`}`,
        { headers: { authorization: `Bearer ${readerToken}` } }
      )
      expect(response.status).toBe(200)
      const ids = (await response.text()).trimEnd().split("\n").map((line) => JSON.parse(line).id as string)
      expect(ids.length).toBe(1000)
      for (const traceId of ids) seen.add(traceId)
      cursor = response.headers.get("x-next-cursor")
      if (cursor !== null) expect(cursor).toBe(ids.at(-1))
      pages++
    } while (cursor !== null && pages < 100)
    expect(pages).toBe(20)
    expect(seen.size).toBe(20_000)
  }, 120_000)

  it("a client that leaves in the middle of a page gives its statement's connection back", async () => {
    const big = (await owner.api((c) => c.leaderboards.create({ payload: aLeaderboard({ name: "left" }) }))).leaderboard.id
    await query(podium.databaseUrl, (sql) =>
      sql`INSERT INTO traces (id, workspace_id, leaderboard_id, source, input, messages, output, status, created_at)
          SELECT gen_random_uuid(), l.workspace_id, l.id, 'inference', repeat('x', 2000), '[]', 'ok', 'success', now()
          FROM leaderboards l, generate_series(1, 3000) AS n WHERE l.id = ${big}`)
    const url = `${podium.url}/v1/leaderboard/${big}/traces?limit=1000&batch_limit=10`
    const headers = { authorization: `Bearer ${readerToken}` }
    // three times the pool's connections, each page left after its first chunk
    for (let i = 0; i < 30; i++) {
      const controller = new AbortController()
      const response = await fetch(url, { headers, signal: AbortSignal.any([controller.signal, AbortSignal.timeout(10_000)]) })
      expect(response.status).toBe(200)
      await response.body!.getReader().read()
      controller.abort()
    }
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(20_000) })
    expect((await response.text()).trimEnd().split("\n")).toHaveLength(1000)
  }, 60_000)
})
