import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

let fake: OpenAiFake
let podium: Podium
let owner: string
let reader: string
let id: string
const runId = "0190a000-0000-7000-8000-0000000000aa"

beforeAll(async () => {
  fake = await startOpenAiFake()
  podium = await startPodium()
  owner = await session("traces-owner")
  reader = (await podium.request("POST", "/api/tokens", {
    token: owner,
    json: { name: "reader", scopes: ["leaderboards:read"] }
  })).body.secret
  id = (await podium.request("POST", "/api/leaderboards", { token: owner, json: { name: "t", dataset_type: "PUSH" } }))
    .body.leaderboard.id
  const model = (await podium.request("POST", `/api/leaderboards/${id}/models`, {
    token: owner,
    json: { name: "custom", platform: "Custom", url: fake.url, auth_type: "none" }
  })).body.model.id
  await podium.request("PATCH", `/api/leaderboards/${id}`, {
    token: owner,
    json: { chosen_model_strategy: "manual", chosen_leaderboard_model_id: model }
  })
  for (let i = 0; i < 5; i++) {
    expect((await podium.request("POST", `/v1/leaderboard/${id}/inference`, { token: owner, json: { input: `q${i}` } })).status)
      .toBe(200)
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

const exportOf = (params: string, token = reader) => podium.request("GET", `/v1/leaderboard/${id}/traces?${params}`, { token })

describe("trace export", () => {
  it("json: the Trace list response, in creation order, with batches and paging", async () => {
    const all = await exportOf("format=json")
    expect(all.status).toBe(200)
    expect(all.body).toMatchObject({
      leaderboard_id: id,
      count: 8,
      limit: 100,
      offset: 0,
      batch_count: 1,
      scanned_rows: 8,
      next_offset: null,
      next_cursor: null
    })
    expect(all.body.traces_url).toContain(`/v1/leaderboard/${id}/traces?format=jsonl`)
    const inference = all.body.rows.filter((r: { source: string }) => r.source === "inference")
    expect(inference.map((r: { input: string }) => r.input)).toEqual(["q0", "q1", "q2", "q3", "q4"])
    expect(inference[0]).toMatchObject({ status: "success", output: "echo: q0", leaderboard_id: id })
    expect(inference[0].created_at).toMatch(/\.\d{3}Z$/)
    expect(inference[0]).not.toHaveProperty("workspace_id")

    // limit caps the rows; batch_limit is rows per round trip
    const inputs = (reply: { body: { rows: Array<{ input: string }> } }) => reply.body.rows.map((r) => r.input)
    const paged = await exportOf("format=json&limit=5&batch_limit=2&offset=1")
    expect(paged.body).toMatchObject({ count: 5, limit: 5, batch_count: 3, scanned_rows: 5, next_offset: 6 })
    expect(inputs(paged)).toEqual(inputs(all).slice(1, 6))
    expect(paged.body.next_cursor).toBe(all.body.rows[5].id)
    const rest = await exportOf(`format=json&limit=5&cursor=${paged.body.next_cursor}`)
    expect(rest.body).toMatchObject({ count: 2, batch_count: 1, next_offset: null, next_cursor: null })
    expect(inputs(rest)).toEqual(inputs(all).slice(6))
    // a page that ends exactly at the last row says so
    expect((await exportOf("format=json&limit=8")).body).toMatchObject({ count: 8, next_cursor: null, next_offset: null })
    expect((await exportOf("format=json&limit=7")).body).toMatchObject({ count: 7, next_cursor: all.body.rows[6].id })
  })

  it("filters by source and run_id", async () => {
    expect((await exportOf("format=json&source=inference")).body.count).toBe(5)
    expect((await exportOf("format=json&source=run")).body.count).toBe(3)
    expect((await exportOf(`format=json&run_id=${runId}`)).body.rows.map((r: { input: string }) => r.input))
      .toEqual(["r0", "r1", "r2"])
    expect((await exportOf("format=json&source=manual")).body).toMatchObject({ count: 0, batch_count: 0, rows: [] })
  })

  it("jsonl (default) and ndjson stream one object per line", async () => {
    for (const [params, type] of [["", "application/jsonl"], ["format=ndjson", "application/x-ndjson"]] as const) {
      const reply = await exportOf(params)
      expect(reply.status).toBe(200)
      expect(reply.headers.get("content-type")).toContain(type)
      const lines = reply.text.trimEnd().split("\n").map((line) => JSON.parse(line))
      expect(lines).toHaveLength(8)
      expect(lines[0]).toHaveProperty("id")
    }
  })

  it("rejects bad parameters and other callers", async () => {
    for (const params of ["format=xml", "batch_limit=0", "batch_limit=101", "limit=0", "limit=1001", "source=web", "run_id=x", "cursor=x"]) {
      const reply = await exportOf(params)
      expect(reply.status, params).toBe(400)
      expect(reply.body.error.code).toBe("validation_failed")
    }
    const stranger = await session("traces-stranger")
    expect((await exportOf("", stranger)).status).toBe(404)
    const serving = (await podium.request("POST", "/api/tokens", {
      token: owner,
      json: { name: "serving", scopes: ["leaderboards:inference"] }
    })).body.secret
    expect((await exportOf("", serving)).status).toBe(403)
  })

  it("exports 20,000 traces as JSONL page by page through X-Next-Cursor, each row once", async () => {
    const big = (await podium.request("POST", "/api/leaderboards", { token: owner, json: { name: "big", dataset_type: "PUSH" } }))
      .body.leaderboard.id
    await query(podium.databaseUrl, (sql) =>
      sql`INSERT INTO traces (id, workspace_id, leaderboard_id, source, input, messages, output, status, created_at)
          SELECT gen_random_uuid(), l.workspace_id, l.id, 'inference', 'row ' || n, '[]', 'ok', 'success', now()
          FROM leaderboards l, generate_series(1, 20000) AS n WHERE l.id = ${big}`)
    const seen = new Set<string>()
    let cursor: string | null = null
    let pages = 0
    do {
      const response: Response = await fetch(
        `${podium.url}/v1/leaderboard/${big}/traces?limit=1000&batch_limit=100${cursor === null ? "" : `&cursor=${cursor}`}`,
        { headers: { authorization: `Bearer ${reader}` } }
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
})
