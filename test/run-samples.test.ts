import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import type { RunId } from "@podium/domain/shared"
import { type ModelFake, startModelFake } from "./fakes/ModelFake.ts"
import { aCandidate, aLeaderboard, type SignedIn, signedIn } from "./support/Builders.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

let fake: ModelFake
let podium: Podium
let owner: SignedIn

/** A hundred questions q1 … q100, whose references are a1 … a100. */
const questions = Array.from({ length: 100 }, (_, i) => ({ input: `q${i + 1}`, expected: `a${i + 1}` }))

beforeAll(async () => {
  fake = await startModelFake({ key: "sk-or-v1-run-samples" })
  fake.models["right"] = (q) => q.replace(/^q/, "a")
  podium = await startPodium({ ROUTER_BASE_URL: `${fake.url}/api/v1`, RUN_CONCURRENCY: "4" })
  owner = await signedIn(podium, "run-samples-owner")
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

/** A PUSH leaderboard whose dataset version 1 holds the hundred questions, with one candidate. */
const pushedLeaderboard = async () => {
  const { id } = (await owner.api((c) =>
    c.leaderboards.create({ payload: aLeaderboard({ name: "samples", dataset_type: "PUSH", eval_type: "exact" }) })
  )).leaderboard
  await owner.api((c) =>
    c.leaderboards.addModel({
      params: { leaderboard_id: id },
      // 1,000 prompt and 500 completion tokens a call at $1 and $2 per million: $0.002 a call
      payload: aCandidate(`${fake.url}/v1`, { name: "right", model_name: "right", input_price_per_m_tokens: 1, output_price_per_m_tokens: 2 })
    })
  )
  await owner.api((c) => c.pushDatasets.push({ params: { leaderboard_id: id }, payload: questions }))
  await owner.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: id } }))
  return id
}

const startRun = (id: LeaderboardId, sample?: { size: number; seed?: number }) =>
  owner.api((c) => c.runs.start({ params: { leaderboard_id: id }, payload: sample === undefined ? null : { sample } }))

/** The ended run and the inputs it asked, in row order. */
const ended = async (id: LeaderboardId, runId: RunId) => {
  const get = () => owner.api((c) => c.runs.get({ params: { leaderboard_id: id, run_id: runId } }))
  await expect.poll(async () => (await get()).run.status, { timeout: 30_000, interval: 50 }).not.toMatch(/^(queued|running)$/)
  const { run } = await get()
  const { rows } = await owner.api((c) => c.runs.results({ params: { leaderboard_id: id, run_id: runId }, query: { limit: 100 } }))
  return { run, inputs: rows.map((r) => r.input) }
}

describe("a run's sample", () => {
  it("the same size and seed on the same dataset version ask the same rows; another seed other rows", async () => {
    const id = await pushedLeaderboard()
    const { run: queued } = await startRun(id, { size: 10, seed: 12345 })
    expect(queued.sample).toEqual({ size: 10, seed: 12345 })
    const first = await ended(id, queued.id)
    expect(first.run.status).toBe("succeeded")
    expect(first.run.dataset).toMatchObject({
      dataset_type: "PUSH",
      version: 1,
      available_rows: 100,
      rows: 10,
      seed: "12345",
      sample: { size: 10, seed: 12345 }
    })
    expect(first.inputs).toHaveLength(10)
    expect(new Set(first.inputs).size).toBe(10)
    // in dataset order
    const positions = first.inputs.map((input) => Number(input.slice(1)))
    expect(positions).toEqual([...positions].sort((a, b) => a - b))
    // ten calls at $0.002, summed exactly (as floats, 0.020000000000000004)
    expect(first.run.results[0]).toMatchObject({ correct: 10, total: 10, total_cost_usd: 0.02 })

    const again = await ended(id, (await startRun(id, { size: 10, seed: 12345 })).run.id)
    expect(again.inputs).toEqual(first.inputs)

    const other = await ended(id, (await startRun(id, { size: 10, seed: 54321 })).run.id)
    expect(other.run.dataset).toMatchObject({ rows: 10, sample: { size: 10, seed: 54321 } })
    expect(other.inputs).not.toEqual(first.inputs)
  })

  it("without a seed the server draws one and records it, so the run can be repeated; a size past the rows takes all", async () => {
    const id = await pushedLeaderboard()
    const { run: drawn } = await startRun(id, { size: 5 })
    expect(drawn.sample).toEqual({ size: 5, seed: expect.any(Number) })
    const seed = drawn.sample!.seed
    expect(Number.isInteger(seed) && seed >= 0 && seed <= 2 ** 31 - 1).toBe(true)
    const first = await ended(id, drawn.id)
    expect(first.inputs).toHaveLength(5)
    const repeated = await ended(id, (await startRun(id, { size: 5, seed })).run.id)
    expect(repeated.inputs).toEqual(first.inputs)

    const all = await ended(id, (await startRun(id, { size: 500, seed: 1 })).run.id)
    expect(all.run.dataset).toMatchObject({ rows: 100, available_rows: 100, seed: null, sample: { size: 500, seed: 1 } })
    expect(all.inputs).toEqual(questions.map((q) => q.input))

    const plain = await ended(id, (await startRun(id)).run.id)
    expect(plain.run.sample).toBeNull()
    expect(plain.run.dataset).toMatchObject({ rows: 100, seed: null })
    expect(plain.run.dataset).not.toHaveProperty("sample")
  })

  it("400 validation_failed for a bad sample, and no run starts", async () => {
    const id = await pushedLeaderboard()
    const bad: ReadonlyArray<unknown> = [
      { size: 0, seed: 1 },
      { size: 100_001, seed: 1 },
      { size: 2.5, seed: 1 },
      { size: 10, seed: -1 },
      { size: 10, seed: 2 ** 31 },
      { size: 10, seed: 1.5 },
      { size: 10, seed: "12345" },
      { seed: 1 },
      "ten rows"
    ]
    for (const sample of bad) {
      const reply = await podium.request("POST", `/api/leaderboards/${id}/run`, { token: owner.session, json: { sample } })
      expect(reply.status, JSON.stringify(sample)).toBe(400)
      expect(reply.body).toMatchObject({ error: { code: "validation_failed", message: expect.any(String) } })
      const paths = reply.body.error.details.issues.map((i: { path: Array<string | number> }) => i.path.join("."))
      expect(paths.some((p: string) => p.startsWith("payload.sample")), `${JSON.stringify(sample)}: ${paths}`).toBe(true)
    }
    const { runs } = await owner.api((c) => c.runs.list({ params: { leaderboard_id: id }, query: {} }))
    expect(runs).toEqual([])
  })
})
