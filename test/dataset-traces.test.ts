import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import type { TraceSource } from "@podium/domain/inference"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { aCandidate, aLeaderboard, apiToken, servingLeaderboard, type SignedIn, signedIn } from "./support/Builders.ts"
import { type Caller, client } from "./support/Client.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

let fake: OpenAiFake
let podium: Podium
let owner: SignedIn
let writer: Caller
let reader: Caller
let id: LeaderboardId

/** A message content that is not a string: exported as its JSON text. */
const contentParts = [{ type: "text", text: "hi" }]

const textRow = { id: "row-1", input: "2+2?", expected: "4", latency_ms: 120, cost_usd: 0.002, extra: { kept: true } }
const messagesRow = {
  messages: [
    { role: "system", content: "Be brief" },
    { role: "user", content: "first" },
    { role: "assistant", content: "ok" },
    { role: "user", content: contentParts }
  ],
  latency_ms: 7.5
}
const questionRow = { question: "3+3?", answer: "6" }
/** No user message (so no input), a number as content, a message without a role. */
const systemOnlyRow = { messages: [{ role: "system", content: 42 }, { content: "who?" }], cost_usd: 0 }

const infer = (input: string) => owner.api((c) => c.inference.infer({ params: { leaderboard_id: id }, payload: { input } }))
const push = (rows: ReadonlyArray<unknown>, leaderboard_id: LeaderboardId = id) =>
  writer((c) => c.pushDatasets.push({ params: { leaderboard_id }, payload: rows }))

type ExportQuery = {
  readonly limit?: number
  readonly offset?: number
  readonly batch_limit?: number
  readonly cursor?: string
  readonly source?: TraceSource
  readonly run_id?: string
}

/** The export as a TraceList (`format=json`). */
const exportJson = async (query: ExportQuery = {}, leaderboard_id: LeaderboardId = id) => {
  const list = await reader((c) => c.traces.export({ params: { leaderboard_id }, query: { ...query, format: "json" } }))
  if (typeof list === "string") throw new Error(`expected a TraceList, got ${list}`)
  return list
}
const ids = (list: { readonly rows: ReadonlyArray<Record<string, unknown>> }) => list.rows.map((r) => r["id"] as string)
const inputs = (list: { readonly rows: ReadonlyArray<Record<string, unknown>> }) => list.rows.map((r) => r["input"])

beforeAll(async () => {
  fake = await startOpenAiFake()
  podium = await startPodium()
  owner = await signedIn(podium, "dataset-traces-owner")
  writer = client(podium, await apiToken(owner.api, ["leaderboards:write"], { name: "writer" }))
  reader = client(podium, await apiToken(owner.api, ["leaderboards:read"], { name: "reader" }))
  id = (await servingLeaderboard(owner.api, aCandidate(fake.url), aLeaderboard({ name: "mixed" }))).id
  // Inference calls and pushes take turns, so the two kinds interleave in id (creation) order.
  await infer("q0")
  expect(await push([textRow, messagesRow, { expected: "no input: rejected" }])).toMatchObject({ accepted_rows: 2, rejected_rows: 1 })
  await infer("q1")
  expect(await push([questionRow, systemOnlyRow])).toMatchObject({ accepted_rows: 2 })
  await infer("q2")
  // Inference traces are written just after each response (group commit): wait for them.
  for (let tries = 0; tries < 400 && (await exportJson({ source: "inference" })).count < 3; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

describe("pushed dataset rows in the trace export", () => {
  it("source=dataset: every accepted row as a trace, in json and jsonl", async () => {
    const list = await exportJson({ source: "dataset" })
    expect(list).toMatchObject({ count: 4, scanned_rows: 4, next_cursor: null, next_offset: null })
    const common = {
      leaderboard_id: id,
      leaderboard_model_id: null,
      source: "dataset",
      run_id: null,
      status: "success",
      error: null,
      usage: null,
      token_id: null
    }
    expect(list.rows).toEqual([
      { ...common, input: "2+2?", messages: [], output: "4", latency_ms: 120, cost_usd: 0.002 },
      {
        ...common,
        input: JSON.stringify(contentParts),
        messages: [
          { role: "system", content: "Be brief" },
          { role: "user", content: "first" },
          { role: "assistant", content: "ok" },
          { role: "user", content: JSON.stringify(contentParts) }
        ],
        output: null,
        latency_ms: 7.5,
        cost_usd: null
      },
      { ...common, input: "3+3?", messages: [], output: "6", latency_ms: null, cost_usd: null },
      {
        ...common,
        input: null,
        messages: [{ role: "system", content: "42" }, { role: "", content: "who?" }],
        output: null,
        latency_ms: null,
        cost_usd: 0
      }
    ].map((expected, i) => ({ ...expected, id: list.rows[i]!["id"], created_at: list.rows[i]!["created_at"] })))
    for (const row of list.rows) {
      expect(row["id"]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7/)
      expect(row["created_at"]).toMatch(/\.\d{3}Z$/)
    }

    const jsonl = await reader((c) => c.traces.export({ params: { leaderboard_id: id }, query: { source: "dataset", format: "jsonl" } }))
    if (typeof jsonl !== "string") throw new Error("expected JSONL text")
    expect(jsonl.trimEnd().split("\n").map((line) => JSON.parse(line))).toEqual(list.rows)
  })

  it("no source: dataset rows and inference traces together, in id order", async () => {
    const all = await exportJson()
    expect(all).toMatchObject({ count: 7, next_cursor: null })
    expect(all.rows.map((r) => [r["source"], r["input"]])).toEqual([
      ["inference", "q0"],
      ["dataset", "2+2?"],
      ["dataset", JSON.stringify(contentParts)],
      ["inference", "q1"],
      ["dataset", "3+3?"],
      ["dataset", null],
      ["inference", "q2"]
    ])
    expect(ids(all)).toEqual([...ids(all)].sort())
    const dataset = await exportJson({ source: "dataset" })
    expect(all.rows.filter((r) => r["source"] === "dataset")).toEqual(dataset.rows)
  })

  it("another source or a run: none of the dataset rows", async () => {
    const inference = await exportJson({ source: "inference" })
    expect(inputs(inference)).toEqual(["q0", "q1", "q2"])
    expect(inference.rows.every((r) => r["source"] === "inference")).toBe(true)
    for (const source of ["run", "manual"] as const) {
      expect(await exportJson({ source })).toMatchObject({ count: 0, rows: [] })
    }
    const runId = "0190a000-0000-7000-8000-0000000000aa"
    expect(await exportJson({ run_id: runId })).toMatchObject({ count: 0, rows: [] })
    expect(await exportJson({ source: "dataset", run_id: runId })).toMatchObject({ count: 0, rows: [] })
  })

  it("pages across both kinds with a cursor and an offset", async () => {
    const all = ids(await exportJson())

    // page by page through next_cursor, two rows a page, one row a round trip
    const seen: Array<string> = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = await exportJson({ limit: 2, batch_limit: 1, ...(cursor === undefined ? {} : { cursor }) })
      seen.push(...ids(page))
      cursor = page.next_cursor ?? undefined
      if (cursor !== undefined) expect(cursor).toBe(ids(page).at(-1))
      pages++
    } while (cursor !== undefined && pages < 10)
    expect(pages).toBe(4)
    expect(seen).toEqual(all)

    // an offset counts rows of both kinds
    const offset = await exportJson({ limit: 3, offset: 2, batch_limit: 2 })
    expect(offset).toMatchObject({ count: 3, batch_count: 2, next_offset: 5, next_cursor: all[4] })
    expect(ids(offset)).toEqual(all.slice(2, 5))
    // a cursor and then an offset
    expect(ids(await exportJson({ cursor: all[1]!, offset: 1, limit: 2 }))).toEqual(all.slice(3, 5))
    // the last page says so
    expect(await exportJson({ cursor: all[4]!, limit: 2 })).toMatchObject({ count: 2, next_cursor: null, next_offset: null })

    // the same, dataset rows only
    const dataset = ids(await exportJson({ source: "dataset" }))
    const first = await exportJson({ source: "dataset", limit: 2, offset: 1 })
    expect(ids(first)).toEqual(dataset.slice(1, 3))
    expect(first.next_cursor).toBe(dataset[2])
    const rest = await exportJson({ source: "dataset", limit: 2, cursor: first.next_cursor! })
    expect(rest).toMatchObject({ next_cursor: null })
    expect(ids(rest)).toEqual(dataset.slice(3))
  })

  it("exports rows consolidation drops as duplicates: they were accepted", async () => {
    const deduped = (await owner.api((c) => c.leaderboards.create({ payload: aLeaderboard({ name: "deduped", dedupe: true }) })))
      .leaderboard.id
    await push([{ input: "a", expected: "1" }, { input: "a", expected: "1", note: "a duplicate" }], deduped)
    const consolidated = await owner.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: deduped } }))
    expect(consolidated.version).toMatchObject({ row_count: 1, dropped_duplicates: 1 })
    const list = await exportJson({ source: "dataset" }, deduped)
    expect(list.rows.map((r) => [r["input"], r["output"]])).toEqual([["a", "1"], ["a", "1"]])
  })
})
