import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { CandidateId, LeaderboardId } from "@podium/domain/leaderboards"
import { type ModelFake, startModelFake } from "./fakes/ModelFake.ts"
import { aCandidate, aLeaderboard, apiToken, type SignedIn, signedIn } from "./support/Builders.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

const routerKey = "sk-or-v1-serving-decisions-key"
let fake: ModelFake
let podium: Podium
let owner: SignedIn

/** Rows as a JSONL file: `${prefix}1` … whose references are `ref-${prefix}1` …. */
const dataset = (prefix: string, rows: number) => ({
  contentType: "application/jsonl",
  body: Array.from({ length: rows }, (_, i) => JSON.stringify({ input: `${prefix}${i + 1}`, expected: `ref-${prefix}${i + 1}` })).join("\n")
})
const rowOf = (question: string) => Number(question.replace(/^[a-z]+/, ""))

beforeAll(async () => {
  fake = await startModelFake({ key: routerKey })
  // the 200 big rows: the incumbent is right on 1 … 120, the challenger on 21 … 200; the 4 small rows:
  // the incumbent on none, the challenger on s1 and s2
  fake.models["incumbent"] = (q) => q.startsWith("big") && rowOf(q) <= 120 ? `ref-${q}` : "no idea"
  fake.models["challenger"] = (q) =>
    (q.startsWith("big") && rowOf(q) > 20) || q === "small1" || q === "small2" ? `ref-${q}` : "no idea"
  fake.files["/small.jsonl"] = dataset("small", 4)
  fake.files["/big.jsonl"] = dataset("big", 200)
  podium = await startPodium({ ROUTER_BASE_URL: `${fake.url}/api/v1`, RUN_CONCURRENCY: "8" })
  owner = await signedIn(podium, "serving-decisions-owner")
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

const emptyLeaderboard = async (path: string) =>
  (await owner.api((c) =>
    c.leaderboards.create({
      payload: aLeaderboard({ name: "decisions", dataset_type: "GET", dataset_url: `${fake.url}${path}`, eval_type: "exact" })
    })
  )).leaderboard.id

const addCandidate = async (id: LeaderboardId, model: string) =>
  (await owner.api((c) =>
    c.leaderboards.addModel({
      params: { leaderboard_id: id },
      payload: aCandidate(`${fake.url}/v1`, { name: model, model_name: model, input_price_per_m_tokens: 1, output_price_per_m_tokens: 2 })
    })
  )).model.id

const leaderboardOf = async (path: string) => {
  const id = await emptyLeaderboard(path)
  return { id, incumbent: await addCandidate(id, "incumbent"), challenger: await addCandidate(id, "challenger") }
}

const runToEnd = async (id: LeaderboardId, model_ids?: ReadonlyArray<CandidateId>) => {
  const { run } = await owner.api((c) =>
    c.runs.start({ params: { leaderboard_id: id }, payload: model_ids === undefined ? null : { model_ids: [...model_ids] } }))
  const get = () => owner.api((c) => c.runs.get({ params: { leaderboard_id: id, run_id: run.id } }))
  await expect.poll(async () => (await get()).run.status, { timeout: 60_000, interval: 50 }).not.toMatch(/^(queued|running)$/)
  const done = (await get()).run
  expect(done.status, done.error ?? "").toBe("succeeded")
  return done
}

const servedBy = async (id: LeaderboardId) => {
  const reply = await podium.request("POST", `/v1/leaderboard/${id}/inference`, {
    token: await apiToken(owner.api, ["leaderboards:inference"]),
    json: { input: "small1" }
  })
  expect(reply.status, reply.text).toBe(200)
  return reply.headers.get("x-service-leaderboard-model-id")
}

/**
 * McNemar's exact test of 20 losses against 80 wins: SciPy 1.x,
 * `scipy.stats.binomtest(20, 100, 0.5).pvalue` = 1.1159089057251951e-09 (one pair, so Holm leaves it).
 */
const pBig = 1.1159089057251951e-09

describe("a run's end decides serving on evidence", () => {
  it("keeps the serving candidate on too little evidence, switches on enough, and both decisions are in the history", async () => {
    const { challenger, id, incumbent } = await leaderboardOf("/small.jsonl")

    // nothing serves: the only candidate asked serves first
    const first = await runToEnd(id, [incumbent])
    expect(first.serving_decision).toMatchObject({ action: "first", from_candidate_id: null, to_candidate_id: incumbent })
    expect(await servedBy(id)).toBe(incumbent)

    // (a) 2/4 against 0/4: the ranking's top, but p = 0.5 on 4 shared rows (30 needed): kept
    const small = await runToEnd(id)
    expect(small.winner_leaderboard_model_id).toBe(challenger)
    expect(small.results.map((r) => [r.leaderboard_model_id, r.correct, r.total, r.rank])).toEqual([
      [challenger, 2, 4, 1],
      [incumbent, 0, 4, 2]
    ])
    expect(small.results[0]).toMatchObject({
      statistically_tied_with: [incumbent],
      rank_band: { best: 1, worst: 2 },
      scored_rows: 4,
      excluded_rows: 0
    })
    // SciPy: binomtest(2, 2, 0.5).pvalue = 0.5
    expect(small.pairwise).toEqual([
      expect.objectContaining({ a: challenger, b: incumbent, shared_rows: 4, wins: 2, losses: 0, ties: 2, p_value: 0.5, p_adjusted: 0.5 })
    ])
    expect(small.serving_decision).toMatchObject({
      action: "keep",
      from_candidate_id: incumbent,
      to_candidate_id: incumbent,
      shared_rows: 4,
      p_value: 0.5
    })
    expect(small.serving_decision!.reason).toContain("p = 0.5")
    expect(small.serving_decision!.reason).toContain("30 needed")
    expect(await servedBy(id)).toBe(incumbent)

    // (b) 180/200 against 120/200, 80 rows won and 20 lost: switched
    fake.files["/small.jsonl"] = dataset("big", 200)
    const big = await runToEnd(id)
    expect(big.results.map((r) => [r.leaderboard_model_id, r.correct, r.total])).toEqual([
      [challenger, 180, 200],
      [incumbent, 120, 200]
    ])
    const [pair] = big.pairwise!
    expect(pair).toMatchObject({ a: challenger, b: incumbent, shared_rows: 200, wins: 80, losses: 20, ties: 100 })
    expect(Math.abs(pair!.p_value - pBig) / pBig).toBeLessThan(1e-9)
    expect(pair!.p_adjusted).toBe(pair!.p_value)
    expect(big.results.map((r) => [r.statistically_tied_with, r.rank_band])).toEqual([
      [[], { best: 1, worst: 1 }],
      [[], { best: 2, worst: 2 }]
    ])
    expect(big.serving_decision).toMatchObject({
      action: "switch",
      from_candidate_id: incumbent,
      to_candidate_id: challenger,
      shared_rows: 200,
      p_value: pair!.p_adjusted
    })
    expect(big.serving_decision!.reason).toContain("p < 0.0001")
    expect(await servedBy(id)).toBe(challenger)

    // (c) the history: newest first, each run's decision with its p-value, by the system for that run
    const history = await owner.api((c) => c.leaderboards.servingHistory({ params: { leaderboard_id: id }, query: {} }))
    expect(history.data.map((e) => [e.kind, e.from_candidate_id, e.to_candidate_id, e.actor])).toEqual([
      ["run", incumbent, challenger, { type: "system", id: "run", run_id: big.id }],
      ["run", incumbent, incumbent, { type: "system", id: "run", run_id: small.id }],
      ["run", null, incumbent, { type: "system", id: "run", run_id: first.id }]
    ])
    expect(history.data.map((e) => e.evidence?.["p_value"])).toEqual([pair!.p_adjusted, 0.5, null])
    expect(history.data.map((e) => e.reason)).toEqual([
      big.serving_decision!.reason,
      small.serving_decision!.reason,
      first.serving_decision!.reason
    ])

    // (d) rollback serves the incumbent again, and is recorded
    const back = await owner.api((c) => c.leaderboards.rollback({ params: { leaderboard_id: id } }))
    expect(back.serving_candidate_id).toBe(incumbent)
    expect(await servedBy(id)).toBe(incumbent)
    const after = await owner.api((c) => c.leaderboards.servingHistory({ params: { leaderboard_id: id }, query: {} }))
    expect(after.data).toHaveLength(4)
    expect(after.data[0]).toMatchObject({ kind: "rollback", from_candidate_id: challenger, to_candidate_id: incumbent })
  }, 120_000)

  it("counts the only candidate as serving: a second one's first run challenges it rather than finding nothing serving", async () => {
    fake.files["/four.jsonl"] = dataset("small", 4)
    const id = await emptyLeaderboard("/four.jsonl")
    const incumbent = await addCandidate(id, "incumbent")
    const alone = await runToEnd(id)
    expect(alone.serving_decision).toMatchObject({ action: "keep", from_candidate_id: incumbent, to_candidate_id: incumbent })
    const challenger = await addCandidate(id, "challenger")
    // the challenger is right on 2 of the 4 rows, the incumbent on none: too few rows to switch
    const challenged = await runToEnd(id)
    expect(challenged.serving_decision).toMatchObject({ action: "keep", from_candidate_id: incumbent, to_candidate_id: incumbent })
    expect(challenged.serving_decision!.reason).toMatch(/^kept incumbent: challenger is not significantly better/)
    expect(await servedBy(id)).toBe(incumbent)
    expect(challenger).not.toBe(incumbent)
  }, 120_000)

  it("under the manual strategy records the decision but the chosen candidate serves", async () => {
    const { challenger, id, incumbent } = await leaderboardOf("/big.jsonl")
    await owner.api((c) =>
      c.leaderboards.update({
        params: { leaderboard_id: id },
        payload: { chosen_model_strategy: "manual", chosen_leaderboard_model_id: incumbent }
      })
    )
    const done = await runToEnd(id)
    // the ranking's pointer (none yet: the chosen candidate) is what the run weighs; the manual choice serves regardless
    expect(done.serving_decision).toMatchObject({ action: "switch", from_candidate_id: incumbent, to_candidate_id: challenger })
    expect(done.serving_decision!.reason).toMatch(/^the manual choice, incumbent, serves/)
    expect(await servedBy(id)).toBe(incumbent)
    const history = await owner.api((c) => c.leaderboards.servingHistory({ params: { leaderboard_id: id }, query: {} }))
    expect(history.data[0]).toMatchObject({
      kind: "run",
      from_candidate_id: incumbent,
      to_candidate_id: incumbent,
      evidence: { action: "switch", to_candidate_id: challenger },
      reason: done.serving_decision!.reason
    })
  }, 120_000)
})
