import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { CandidateId, LeaderboardId } from "@podium/domain/leaderboards"
import type { RunId } from "@podium/domain/shared"
import { wilson } from "@podium/domain/runs"
import { type ModelFake, startModelFake } from "./fakes/ModelFake.ts"
import {
  aCandidate,
  aCase,
  aLeaderboard,
  apiToken,
  createCase,
  generate,
  humanLeaderboard,
  type NewLeaderboard,
  type SignedIn,
  signedIn
} from "./support/Builders.ts"
import { expectError } from "./support/Client.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

const routerKey = "sk-or-v1-runs-router-key"
let fake: ModelFake
let podium: Podium
let owner: SignedIn

/** Ten questions: q1 … q10, whose references are a1 … a10. */
const questions = Array.from({ length: 10 }, (_, i) => ({ input: `q${i + 1}`, expected: `a${i + 1}` }))
const referenceOf = (question: string) => question.replace(/^q/, "a")

beforeAll(async () => {
  fake = await startModelFake({ key: routerKey })
  // always right, with the case, spacing and trailing punctuation exact scoring forgives
  fake.models["right"] = (q) => ` ${referenceOf(q).toUpperCase()}.  `
  // right on q1 … q6 only
  fake.models["partly"] = (q) => Number(q.slice(1)) <= 6 ? referenceOf(q) : "no idea"
  fake.models["broken"] = () => ({ status: 400 })
  fake.files["/data.jsonl"] = { contentType: "application/jsonl", body: questions.map((r) => JSON.stringify(r)).join("\n") }
  podium = await startPodium({ ROUTER_BASE_URL: `${fake.url}/api/v1`, HUB_BASE_URL: `${fake.url}/hub`, RUN_CONCURRENCY: "4" })
  owner = await signedIn(podium, "runs-owner")
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

/** A GET leaderboard of the ten questions; an override set to undefined leaves that field out. */
const getLeaderboard = (overrides: Partial<NewLeaderboard> = {}): NewLeaderboard =>
  Object.fromEntries(
    Object.entries(
      aLeaderboard({ name: "exact", dataset_type: "GET", dataset_url: `${fake.url}/data.jsonl`, eval_type: "exact", ...overrides })
    ).filter(([, value]) => value !== undefined)
  ) as NewLeaderboard

const leaderboardWith = async (models: ReadonlyArray<string>, overrides: Partial<NewLeaderboard> = {}) => {
  const { id } = (await owner.api((c) => c.leaderboards.create({ payload: getLeaderboard(overrides) }))).leaderboard
  const candidates: Array<CandidateId> = []
  for (const model of models) {
    const { model: added } = await owner.api((c) =>
      c.leaderboards.addModel({
        params: { leaderboard_id: id },
        payload: aCandidate(`${fake.url}/v1`, { name: model, model_name: model, input_price_per_m_tokens: 1, output_price_per_m_tokens: 2 })
      })
    )
    candidates.push(added.id)
  }
  return { id, candidates }
}

const startRun = (id: LeaderboardId, payload?: { model_ids?: Array<string>; improve_dataset?: boolean }) =>
  owner.api((c) => c.runs.start({ params: { leaderboard_id: id }, payload: payload ?? null }))

const ended = async (id: LeaderboardId, runId: RunId) => {
  await expect.poll(async () => (await owner.api((c) => c.runs.get({ params: { leaderboard_id: id, run_id: runId } }))).run.status, {
    timeout: 30_000,
    interval: 50
  }).not.toMatch(/^(queued|running)$/)
  return (await owner.api((c) => c.runs.get({ params: { leaderboard_id: id, run_id: runId } }))).run
}

describe("exact runs", () => {
  it("scores every candidate on every row, ranks them, and with nothing serving yet the winner serves first", async () => {
    const { candidates: [right, partly], id } = await leaderboardWith(["partly", "right"]).then(({ candidates, id }) => ({
      id,
      candidates: [candidates[1]!, candidates[0]!]
    }))
    const { run } = await startRun(id)
    expect(run).toMatchObject({ status: "queued", run_source: "manual", eval_type: "exact", improve_dataset: false })
    expect([...run.model_ids].sort()).toEqual([right, partly].sort())
    const { leaderboard: during } = await owner.api((c) => c.leaderboards.get({ params: { leaderboard_id: id } }))
    expect(during.status).toBe("running")

    const done = await ended(id, run.id)
    expect(done.status).toBe("succeeded")
    expect(done.progress).toEqual({ total: 20, completed: 20, failed: 0 })
    expect(done.dataset).toMatchObject({ dataset_type: "GET", rows: 10, available_rows: 10, skipped_rows: 0, seed: null })
    expect(done.winner_leaderboard_model_id).toBe(right)
    // 4 rows won, none lost: p = 0.125, tied at alpha 0.05; equal costs, so the better score serves
    expect(done.serving_decision).toMatchObject({ action: "first", from_candidate_id: null, to_candidate_id: right })
    const [first, second] = done.results
    const interval = wilson(6, 10)!
    expect(first).toMatchObject({ leaderboard_model_id: right, name: "right", correct: 10, total: 10, score: 1, rank: 1, errors: 0 })
    expect(second).toMatchObject({
      leaderboard_model_id: partly,
      correct: 6,
      total: 10,
      score: 0.6,
      score_low: interval.low,
      score_high: interval.high,
      rank: 2
    })
    // 1,000 prompt and 500 completion tokens a call at $1 and $2 per million: $0.002 a call
    expect(first!.total_cost_usd).toBeCloseTo(0.02, 10)
    expect(first!.latency_ms_p50).toBeGreaterThan(0)

    const detail = await owner.api((c) => c.leaderboards.get({ params: { leaderboard_id: id } }))
    expect(detail.leaderboard.status).toBe("active")
    expect(detail.runs.map((r) => r.id)).toEqual([run.id])

    const served = await podium.request("POST", `/v1/leaderboard/${id}/inference`, {
      token: await apiToken(owner.api, ["leaderboards:inference"]),
      json: { input: "q3" }
    })
    expect(served.status).toBe(200)
    expect(served.headers.get("x-service-leaderboard-model-id")).toBe(right)
  })

  it("shows each row's answers and verdicts, and every call as a run trace", async () => {
    const { candidates: [partly], id } = await leaderboardWith(["partly"])
    const { run } = await startRun(id)
    await ended(id, run.id)
    const page = await owner.api((c) =>
      c.runs.results({ params: { leaderboard_id: id, run_id: run.id }, query: { limit: 8 } })
    )
    expect(page.rows).toHaveLength(8)
    expect(page.next_offset).toBe(8)
    expect(page.rows[0]).toEqual({
      index: 0,
      input: "q1",
      reference: "a1",
      results: [{ leaderboard_model_id: partly, output: "a1", verdict: "correct", reason: null, error: null, latency_ms: expect.any(Number), cost_usd: expect.closeTo(0.002, 10) }]
    })
    expect(page.rows[7]!.results[0]).toMatchObject({ output: "no idea", verdict: "incorrect" })
    const rest = await owner.api((c) =>
      c.runs.results({ params: { leaderboard_id: id, run_id: run.id }, query: { limit: 8, offset: 8 } })
    )
    expect(rest.rows.map((r) => r.index)).toEqual([8, 9])
    expect(rest.next_offset).toBeNull()

    const token = await apiToken(owner.api, ["leaderboards:read"])
    const exported = async () => {
      const traces = await podium.request("GET", `/v1/leaderboard/${id}/traces?source=run&run_id=${run.id}&format=json&limit=100`, { token })
      expect(traces.status).toBe(200)
      return traces.body.rows as Array<{ source: string; run_id: string; leaderboard_model_id: string; input: string }>
    }
    // traces are written off the cells' path, in batches
    await expect.poll(async () => (await exported()).length, { timeout: 10_000, interval: 50 }).toBe(10)
    const listed = await exported()
    expect(listed.every((t) => t.source === "run" && t.run_id === run.id && t.leaderboard_model_id === partly)).toBe(true)
    expect(listed.map((t) => t.input).sort()).toEqual(questions.map((q) => q.input).sort())
  })

  it("asks only the candidates in model_ids; a failing candidate's calls are errors and incorrect", async () => {
    const { candidates: [right, broken, partly], id } = await leaderboardWith(["right", "broken", "partly"])
    const { run } = await startRun(id, { model_ids: [broken!, right!] })
    const done = await ended(id, run.id)
    expect(done.status).toBe("succeeded")
    expect(done.results.map((r) => r.leaderboard_model_id)).toEqual([right, broken])
    expect(done.results[1]).toMatchObject({ correct: 0, total: 10, errors: 10, rank: 2, latency_ms_p50: null })
    expect(done.progress).toEqual({ total: 20, completed: 20, failed: 10 })
    expect(fake.asked.get("partly:q1") ?? 0).toBeLessThanOrEqual(2) // only the other tests asked it
    await expectError(startRun(id, { model_ids: ["00000000-0000-7000-8000-000000000000"] }), 400, "validation_failed")
    void partly
  })

  it("runs one at a time, and a cancelled run stops and gives the leaderboard back", async () => {
    fake.models["slow"] = (q) => referenceOf(q)
    const { id } = await leaderboardWith(["slow"])
    fake.delayMs = 1_000
    try {
      const { run } = await startRun(id)
      const second = await expectError(startRun(id), 409, "run_in_progress")
      expect(second.error.details).toEqual({ run_id: run.id })
      await expect.poll(async () =>
        (await owner.api((c) => c.runs.get({ params: { leaderboard_id: id, run_id: run.id } }))).run.status
      ).toBe("running")
      const { run: cancelled } = await owner.api((c) => c.runs.cancel({ params: { leaderboard_id: id, run_id: run.id } }))
      expect(cancelled.status).toBe("cancelled")
      expect(cancelled.finished_at).not.toBeNull()
      const { leaderboard } = await owner.api((c) => c.leaderboards.get({ params: { leaderboard_id: id } }))
      expect(leaderboard.status).toBe("active")
      await expectError(owner.api((c) => c.runs.cancel({ params: { leaderboard_id: id, run_id: run.id } })), 409, "run_ended")
      const asked = fake.seen.filter((r) => r.body?.model === "slow").length
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      // calls in flight when it was cancelled may land; nothing new starts after the next look
      expect(fake.seen.filter((r) => r.body?.model === "slow").length).toBeLessThanOrEqual(asked + 4)
      expect(fake.seen.filter((r) => r.body?.model === "slow").length).toBeLessThan(10)
      const { run: after } = await owner.api((c) => c.runs.get({ params: { leaderboard_id: id, run_id: run.id } }))
      expect(after.status).toBe("cancelled")

      const { run: next } = await startRun(id)
      fake.delayMs = 0
      expect((await ended(id, next.id)).status).toBe("succeeded")
      const listed = await owner.api((c) => c.runs.list({ params: { leaderboard_id: id }, query: {} }))
      expect(listed.runs.map((r) => r.id)).toEqual([next.id, run.id])
    } finally {
      fake.delayMs = 0
    }
  })
})

describe("what cannot run", () => {
  it("answers 409 without a usable dataset, for human leaderboards, judges without a judge, and no candidates", async () => {
    const noUrl = await leaderboardWith(["right"], { dataset_url: undefined })
    await expectError(startRun(noUrl.id), 409, "dataset_missing")
    const push = await leaderboardWith(["right"], { dataset_type: "PUSH", dataset_url: undefined })
    await expectError(startRun(push.id), 409, "dataset_missing")
    const human = await leaderboardWith(["right", "partly"], { eval_type: "human" })
    await expectError(startRun(human.id), 409, "not_runnable")
    const judge = await leaderboardWith(["right"], { eval_type: "judge" })
    await expectError(startRun(judge.id), 409, "not_runnable")
    const empty = await leaderboardWith([])
    await expectError(startRun(empty.id), 409, "not_runnable")
    const other = await signedIn(podium, "runs-stranger")
    await expectError(other.api((c) => c.runs.start({ params: { leaderboard_id: noUrl.id }, payload: null })), 404, "not_found")
  })

  it("fails the run with the reason when the dataset cannot be read", async () => {
    const { id } = await leaderboardWith(["right"], { dataset_url: `${fake.url}/missing.jsonl` })
    const { run } = await startRun(id)
    const done = await ended(id, run.id)
    expect(done.status).toBe("failed")
    expect(done.error).toMatch(/^dataset: .*404/)
    const { leaderboard } = await owner.api((c) => c.leaderboards.get({ params: { leaderboard_id: id } }))
    expect(leaderboard.status).toBe("active")
  })
})

describe("datasets of runs", () => {
  it("reads CSV and JSON files, and samples max_samples_to_gather rows with a recorded seed", async () => {
    fake.files["/data.csv"] = {
      contentType: "text/csv",
      body: "question,answer\n" + questions.map((q) => `${q.input},${q.expected}`).join("\n")
    }
    fake.files["/data.json"] = { contentType: "application/json", body: JSON.stringify({ rows: questions.slice(0, 4) }) }
    const csv = await leaderboardWith(["right"], { dataset_url: `${fake.url}/data.csv` })
    const json = await leaderboardWith(["right"], { dataset_url: `${fake.url}/data.json` })
    const sampled = await leaderboardWith(["right"], { auto_limit_size: true, max_samples_to_gather: 3 })
    const runs = await Promise.all([csv, json, sampled].map(async ({ id }) => ended(id, (await startRun(id)).run.id)))
    expect(runs.map((r) => [r.status, r.dataset?.rows, r.results[0]?.correct])).toEqual([
      ["succeeded", 10, 10],
      ["succeeded", 4, 4],
      ["succeeded", 3, 3]
    ])
    expect(runs[2]!.dataset).toMatchObject({ available_rows: 10, rows: 3, seed: expect.any(String) })
  })

  it("reads a hub dataset's rows through the dataset-viewer API", async () => {
    fake.files["/hub/splits"] = {
      contentType: "application/json",
      body: () => ({ splits: [{ dataset: "acme/qa", config: "default", split: "train" }, { dataset: "acme/qa", config: "default", split: "test" }] })
    }
    fake.files["/hub/rows"] = {
      contentType: "application/json",
      body: (search) => {
        const offset = Number(search.get("offset"))
        const all = search.get("split") === "test" ? questions.slice(0, 7) : questions
        return {
          rows: all.slice(offset, offset + Number(search.get("length"))).map((row, i) => ({ row_idx: offset + i, row, truncated_cells: [] })),
          num_rows_total: all.length
        }
      }
    }
    const { id } = await leaderboardWith(["right"], { dataset_url: "https://huggingface.co/datasets/acme/qa" })
    const done = await ended(id, (await startRun(id)).run.id)
    expect(done).toMatchObject({ status: "succeeded", dataset: { rows: 7, url: "https://huggingface.co/datasets/acme/qa" } })
    expect(done.results[0]).toMatchObject({ correct: 7, total: 7 })
    expect(fake.seen.some((r) => r.path === "/hub/rows" && r.search.includes("dataset=acme%2Fqa"))).toBe(true)
  })

  it("runs a PUSH dataset's latest version, skipping rows without a reference when scoring exactly", async () => {
    const { id } = await leaderboardWith(["right"], { dataset_type: "PUSH", dataset_url: undefined })
    await owner.api((c) =>
      c.pushDatasets.push({ params: { leaderboard_id: id }, payload: [...questions.slice(0, 5), { input: "unlabelled" }] })
    )
    await owner.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: id } }))
    const done = await ended(id, (await startRun(id)).run.id)
    expect(done.dataset).toMatchObject({ dataset_type: "PUSH", version: 1, rows: 5, skipped_rows: 1 })
    expect(done.results[0]).toMatchObject({ correct: 5, total: 5 })
  })
})

describe("judge runs", () => {
  /** The judge: correct when the answer's block holds the reference's text; replies in a code fence for q1. */
  const judge = (_: string, body: any) => {
    const content = String(body.messages.at(-1).content)
    const block = (name: string) => content.match(new RegExp(`<${name}>\\n([\\s\\S]*?)\\n</${name}>`))?.[1] ?? ""
    const question = block("question")
    if (question === "q10") return "I think it is fine" // not JSON: a judge failure, not a verdict
    const verdict = block("answer").toLowerCase().includes(block("reference").toLowerCase()) ? "correct" : "incorrect"
    const reply = JSON.stringify({ verdict, reason: `compared ${question}` })
    return question === "q1" ? "```json\n" + reply + "\n```" : reply
  }

  it("asks the judge through the router integration with a JSON schema; its failures are errors", async () => {
    fake.models["judge/model"] = judge
    await owner.api((c) => c.integrations.validate({ payload: { provider: "router", token: routerKey } }))
    const { candidates: [partly], id } = await leaderboardWith(["partly"], {
      eval_type: "judge",
      judge_provider: "router",
      judge_model: "judge/model"
    })
    const done = await ended(id, (await startRun(id)).run.id)
    expect(done.status).toBe("succeeded")
    // q1 … q6 right, q7 … q9 wrong, q10's verdict unreadable
    expect(done.results[0]).toMatchObject({ leaderboard_model_id: partly, correct: 6, total: 9, errors: 1 })
    expect(done.progress).toEqual({ total: 10, completed: 10, failed: 1 })

    const judged = fake.seen.filter((r) => r.body?.model === "judge/model" && r.path === "/api/v1/chat/completions")
    expect(judged.length).toBeGreaterThanOrEqual(10)
    expect(judged[0]!.authorization).toBe(`Bearer ${routerKey}`)
    expect(judged[0]!.body.response_format).toMatchObject({ type: "json_schema", json_schema: { name: "verdict", strict: true } })

    const { rows } = await owner.api((c) => c.runs.results({ params: { leaderboard_id: id, run_id: done.id }, query: {} }))
    expect(rows[0]!.results[0]).toMatchObject({ verdict: "correct", reason: "compared q1", error: null })
    expect(rows[9]!.results[0]).toMatchObject({ output: "no idea", verdict: null, error: expect.stringMatching(/^judge: /) })
  })
})

describe("improve-dataset", () => {
  /** Proposes the right reference (a7 for q7) when asked for one; judges like the judge above otherwise. */
  const labeller = (_: string, body: any) => {
    const content = String(body.messages.at(-1).content)
    const question = content.match(/<question>\n([\s\S]*?)\n<\/question>/)?.[1] ?? ""
    if (String(body.messages[0].content).includes("reference answer")) return question.replace("q", "a")
    const answer = content.match(/<answer>\n([\s\S]*?)\n<\/answer>/)?.[1] ?? ""
    const reference = content.match(/<reference>\n([\s\S]*?)\n<\/reference>/)?.[1] ?? ""
    return JSON.stringify({ verdict: answer.toLowerCase().includes(reference.toLowerCase()) ? "correct" : "incorrect", reason: "" })
  }
  const improvementOf = async (id: LeaderboardId) => {
    await expect.poll(async () => (await owner.api((c) => c.runs.improvement({ params: { leaderboard_id: id } }))).improvement?.status, {
      timeout: 20_000,
      interval: 50
    }).not.toBe("running")
    return (await owner.api((c) => c.runs.improvement({ params: { leaderboard_id: id } }))).improvement
  }

  it("proposes references for rows without one and, when asked, where candidates disagree; runs use them", async () => {
    fake.models["labeller/model"] = labeller
    await owner.api((c) => c.integrations.validate({ payload: { provider: "router", token: routerKey } }))
    fake.files["/improve.jsonl"] = {
      contentType: "application/jsonl",
      body: [{ input: "q7", expected: "wrong7" }, { input: "q8" }, { input: "q9", expected: "a9" }].map((r) => JSON.stringify(r)).join("\n")
    }
    const { candidates: [right], id } = await leaderboardWith(["right", "partly"], {
      dataset_url: `${fake.url}/improve.jsonl`,
      judge_provider: "router",
      judge_model: "labeller/model"
    })
    const first = await ended(id, (await startRun(id)).run.id)
    expect(first.dataset).toMatchObject({ rows: 2, skipped_rows: 1, improved_rows: 0 })
    expect(first.results.find((r) => r.leaderboard_model_id === right)).toMatchObject({ correct: 1, total: 2 })

    // without replace_references only q8 (no reference) is improved
    const { improvement } = await owner.api((c) => c.runs.improveDataset({ params: { leaderboard_id: id }, payload: null }))
    expect(improvement).toMatchObject({ status: "running", labeller: "router:labeller/model", replace_references: false })
    expect(await improvementOf(id)).toMatchObject({ status: "succeeded", total: 1, improved: 1, failed: 0, version: 1 })
    const second = await ended(id, (await startRun(id)).run.id)
    expect(second.dataset).toMatchObject({ rows: 3, skipped_rows: 0, improved_rows: 1 })
    expect(second.results.find((r) => r.leaderboard_model_id === right)).toMatchObject({ correct: 2, total: 3 })

    // a second job without replace_references finds nothing to do: q8's improved reference counts as its own
    await owner.api((c) => c.runs.improveDataset({ params: { leaderboard_id: id }, payload: null }))
    expect(await improvementOf(id)).toMatchObject({ status: "succeeded", total: 0, improved: 0, version: null })

    // right says a7, a8, a9 and partly "no idea" to each: they disagree on all three, so all are proposed
    // again, and q7's given reference is replaced
    await owner.api((c) => c.runs.improveDataset({ params: { leaderboard_id: id }, payload: { replace_references: true } }))
    expect(await improvementOf(id)).toMatchObject({ status: "succeeded", total: 3, improved: 3, version: 2 })
    const third = await ended(id, (await startRun(id)).run.id)
    expect(third.dataset).toMatchObject({ rows: 3, improved_rows: 3 })
    expect(third.results.find((r) => r.leaderboard_model_id === right)).toMatchObject({ correct: 3, total: 3 })
    const { rows } = await owner.api((c) => c.runs.results({ params: { leaderboard_id: id, run_id: third.id }, query: {} }))
    expect(rows.map((r) => r.reference)).toEqual(["a7", "a8", "a9"])
  })

  it("improves first when a run asks, and needs a judge or a serving candidate", async () => {
    fake.files["/unlabelled.jsonl"] = { contentType: "application/jsonl", body: '{"input":"q1"}\n{"input":"q2"}\n{"input":"q3"}' }
    const { id } = await leaderboardWith(["right"], {
      dataset_url: `${fake.url}/unlabelled.jsonl`,
      judge_provider: "router",
      judge_model: "labeller/model"
    })
    const done = await ended(id, (await startRun(id, { improve_dataset: true })).run.id)
    expect(done).toMatchObject({ status: "succeeded", improve_dataset: true, dataset: { rows: 3, improved_rows: 3 } })
    expect(done.results[0]).toMatchObject({ correct: 3, total: 3 })

    // two candidates, none chosen, no ranking: nothing serves (test/service-labeller.test.ts: the serving candidate labels)
    const noLabeller = await leaderboardWith(["right", "partly"])
    await expectError(owner.api((c) => c.runs.improveDataset({ params: { leaderboard_id: noLabeller.id }, payload: null })), 409, "not_runnable")
  })
})

describe("judge calibration", () => {
  it("reports the judge's agreement with people who judged the same answers", async () => {
    fake.models["calibrated/judge"] = (_: string, body: any) => {
      const content = String(body.messages.at(-1).content)
      const answer = content.match(/<answer>\n([\s\S]*?)\n<\/answer>/)?.[1] ?? ""
      const reference = content.match(/<reference>\n([\s\S]*?)\n<\/reference>/)?.[1] ?? ""
      return JSON.stringify({ verdict: answer.toLowerCase().includes(reference.toLowerCase()) ? "correct" : "incorrect", reason: "" })
    }
    await owner.api((c) => c.integrations.validate({ payload: { provider: "router", token: routerKey } }))

    // people judge right and partly on q1, q7, q8 — and call partly's (correct) a1 incorrect
    const humanBoard = () =>
      humanLeaderboard(owner.api, ["right", "partly"].map((model) => aCandidate(`${fake.url}/v1`, { name: model, model_name: model })))
    const confirm = async (human: { readonly id: LeaderboardId }, people: Record<string, Record<string, "correct" | "incorrect">>) => {
      for (const [input, verdicts] of Object.entries(people)) {
        const { body } = await createCase(owner.api, human.id, aCase({ input }))
        await generate(owner.api, human.id, body.id)
        await expect.poll(async () =>
          (await owner.api((c) => c.human.getCase({ params: { leaderboard_id: human.id, case_id: body.id } }))).status
        , { timeout: 10_000, interval: 50 }).toBe("generated")
        const generated = await owner.api((c) => c.human.getCase({ params: { leaderboard_id: human.id, case_id: body.id } }))
        // right answers " A1.  " (padded), partly "a1" or "no idea": that tells whose response is whose
        const verdictOn = (output: string | null) => /^\s/.test(output ?? "") ? verdicts["right"]! : verdicts["partly"]!
        await owner.api((c) =>
          c.human.saveReview({
            params: { leaderboard_id: human.id, case_id: body.id },
            payload: {
              revision: generated.revision,
              confirm: true,
              review: { verdicts: Object.fromEntries(generated.responses.map((r) => [r.id, verdictOn(r.output)])), reference: "", notes: "" }
            }
          })
        )
      }
    }
    await confirm(await humanBoard(), {
      q1: { right: "correct", partly: "incorrect" },
      q7: { right: "correct", partly: "incorrect" },
      q8: { right: "correct", partly: "incorrect" }
    })
    // another human leaderboard confirms q1's same two answers later, the other way round: each judged
    // answer pairs with the first confirmed human verdict only, so these change nothing (they made n 8)
    await confirm(await humanBoard(), { q1: { right: "incorrect", partly: "correct" } })

    const { id } = await leaderboardWith(["right", "partly"], { eval_type: "judge", judge_provider: "router", judge_model: "calibrated/judge" })
    const done = await ended(id, (await startRun(id)).run.id)
    const calibration = await owner.api((c) => c.runs.agreement({ params: { leaderboard_id: id, run_id: done.id } }))
    // six pairs: the judge says correct to right (3) and to partly on q1, incorrect to partly on q7, q8;
    // people agree on five: po = 5/6, pe = 4/6·3/6 + 2/6·3/6 = 1/2, kappa = (5/6 − 1/2)/(1/2) = 2/3
    expect(calibration).toMatchObject({
      n: 6,
      confusion: {
        judge_correct_human_correct: 3,
        judge_correct_human_incorrect: 1,
        judge_incorrect_human_correct: 0,
        judge_incorrect_human_incorrect: 2
      }
    })
    expect(calibration.percent_agreement).toBeCloseTo(100 * 5 / 6, 10)
    expect(calibration.kappa).toBeCloseTo(2 / 3, 10)
    expect(calibration.kappa_low!).toBeLessThan(2 / 3)
    expect(calibration.kappa_high!).toBeGreaterThan(2 / 3)

    const exact = await leaderboardWith(["right"])
    const exactRun = await ended(exact.id, (await startRun(exact.id)).run.id)
    await expectError(owner.api((c) => c.runs.agreement({ params: { leaderboard_id: exact.id, run_id: exactRun.id } })), 409, "not_runnable")
  })
})

describe("starts and cancels racing", () => {
  it("concurrent starts and cancels on one leaderboard answer 202, 200 or 409, never 500, and leave it usable", async () => {
    fake.models["slow"] ??= (q) => referenceOf(q)
    const { id } = await leaderboardWith(["right"])
    const token = await apiToken(owner.api, ["leaderboards:run", "leaderboards:read"])
    const statuses: Array<number> = []
    for (let round = 0; round < 8; round++) {
      const replies = await Promise.all([
        podium.request("POST", `/api/leaderboards/${id}/run`, { token }),
        podium.request("POST", `/api/leaderboards/${id}/run`, { token })
      ])
      statuses.push(...replies.map((r) => r.status))
      const started = replies.find((r) => r.status === 202)
      if (started !== undefined) {
        // cancel while it may be ending on its own: the two ends race for the leaderboard
        const cancel = await podium.request("POST", `/api/leaderboards/${id}/runs/${started.body.run.id}/cancel`, { token })
        statuses.push(cancel.status)
      }
    }
    expect(statuses.filter((s) => ![200, 202, 409].includes(s))).toEqual([])
    expect(statuses.filter((s) => s === 202).length).toBeGreaterThanOrEqual(1)
    const listed = await owner.api((c) => c.runs.list({ params: { leaderboard_id: id }, query: {} }))
    await expect.poll(async () => (await owner.api((c) => c.leaderboards.get({ params: { leaderboard_id: id } }))).leaderboard.status, {
      timeout: 10_000
    }).toBe("active")
    expect(listed.runs.every((r) => r.status !== "queued" || listed.runs.indexOf(r) === 0)).toBe(true)
    const last = await ended(id, (await startRun(id)).run.id)
    expect(last.status).toBe("succeeded")
  })
})

describe("hostile answers", () => {
  it("a candidate answering with U+0000 and lone surrogates is scored and stored, and the run ends", async () => {
    fake.models["poison"] = (q) => `${referenceOf(q)}\u0000\ud800`
    const { id } = await leaderboardWith(["poison"])
    const done = await ended(id, (await startRun(id)).run.id)
    expect(done).toMatchObject({ status: "succeeded", progress: { total: 10, completed: 10, failed: 0 } })
    expect(done.results[0]).toMatchObject({ correct: 0, total: 10 })
    const { rows } = await owner.api((c) => c.runs.results({ params: { leaderboard_id: id, run_id: done.id }, query: { limit: 1 } }))
    expect(rows[0]!.results[0]!.output).toBe("a1\uFFFD\uFFFD")
  })
})
