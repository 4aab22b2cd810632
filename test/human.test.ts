import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CaseId, DocumentId } from "@podium/domain/human"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import type { ConfigRequest, ReviewRequest } from "@podium/adapters-http/human/HumanApi"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import {
  aCandidate,
  aCase,
  aDocument,
  aHumanLeaderboard,
  apiToken,
  choose,
  createCase,
  generate,
  humanLeaderboard,
  type NewCase,
  type NewLeaderboard,
  type SignedIn,
  signedIn,
  verdictsOn
} from "./support/Builders.ts"
import { ApiFailure, type Caller, client, expectError, expectValidation, unchecked } from "./support/Client.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

let fake: OpenAiFake
let podium: Podium
let owner: SignedIn

beforeAll(async () => {
  fake = await startOpenAiFake()
  podium = await startPodium()
  owner = await signedIn(podium, "human-owner")
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

type Review = typeof ReviewRequest.Type
type Config = typeof ConfigRequest.Type

const H = (id: string) => `/api/leaderboards/${id}/human`

/** A human leaderboard whose candidates answer at `{fake}/{path}` (a path of "refused" cannot be reached). */
const leaderboard = (paths: ReadonlyArray<string>, overrides: Partial<NewLeaderboard> = {}) =>
  humanLeaderboard(
    owner.api,
    paths.map((path) =>
      aCandidate(path === "refused" ? "http://127.0.0.1:1/v1" : `${fake.url}/${path}`, { name: `secret-model-${path}` })
    ),
    aHumanLeaderboard({ system_prompt: "Answer briefly.", ...overrides })
  )

const newCase = (leaderboard_id: LeaderboardId, overrides: Partial<NewCase> = {}) =>
  createCase(owner.api, leaderboard_id, aCase(overrides))
const generated = (leaderboard_id: LeaderboardId, case_id: CaseId) => generate(owner.api, leaderboard_id, case_id)
const getCase = (leaderboard_id: LeaderboardId, case_id: CaseId) =>
  owner.api((c) => c.human.getCase({ params: { leaderboard_id, case_id } }))
const saveConfig = (leaderboard_id: LeaderboardId, case_id: CaseId, payload: Config) =>
  owner.api((c) => c.human.saveConfig({ params: { leaderboard_id, case_id }, payload }))
const review = (leaderboard_id: LeaderboardId, case_id: CaseId, payload: Review) =>
  owner.api((c) => c.human.saveReview({ params: { leaderboard_id, case_id }, payload }))
const summary = (leaderboard_id: LeaderboardId, api: Caller = owner.api) =>
  api((c) => c.human.summary({ params: { leaderboard_id }, query: {} }))
/** Payloads the contract forbids, which the typed client will not send. */
const sendUnchecked = (method: string, path: string, json?: unknown) =>
  unchecked(podium, method, path, { token: owner.session, json })
const callsTo = (path: string) => fake.seen.filter((s) => s.path === `/${path}/chat/completions`).length
const noReview = { verdicts: {}, reference: "", notes: "" }

describe("human evaluation", () => {
  it("a case goes draft → generated → reviewed blind → confirmed, which reveals the models", async () => {
    const paths = ["h-a", "h-b", "h-c"]
    const { candidates, id } = await leaderboard(paths)
    const caseId = CaseId.make(randomUUID())
    const created = await newCase(id, { id: caseId, context: "Order 42", prompt_override: null })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ id: caseId, status: "draft", revision: 1, prompt: "Answer briefly.", responses: [], current: true })

    const retry = await newCase(id, { id: caseId, context: "Order 42" })
    expect(retry.status).toBe(200)
    expect(retry.body.id).toBe(caseId)
    await expectError(newCase(id, { id: caseId, context: "Order 43" }), 409, "id_reused")

    const stale = await expectError(saveConfig(id, caseId, { revision: 9, prompt_override: "x" }), 409, "stale_revision")
    expect(stale.error).toMatchObject({ code: "stale_revision", details: { current_revision: 1 } })
    const configured = await saveConfig(id, caseId, { revision: 1, prompt_override: "Be exact." })
    expect(configured).toMatchObject({ revision: 2, prompt: "Be exact.", prompt_override: "Be exact." })

    await expectError(review(id, caseId, { revision: 2, confirm: false, review: noReview }), 409, "case_not_generated")

    const answered = await generated(id, caseId)
    expect(answered).toMatchObject({ status: "generated", response_total: 3, review_state: "none" })
    expect(answered.responses.map((r) => r.label)).toEqual(["A", "B", "C"])
    for (const r of answered.responses) {
      expect(r).toMatchObject({ status: "succeeded", model: null, cost_usd: null })
      expect(r.output).toBe("echo: Context:\nOrder 42\n\nRefund window?")
    }
    expect(fake.seen.at(-1)!.body.messages[0]).toEqual({ role: "system", content: "Be exact." })
    // blind: nothing in the answer names a model (strict decoding: the answer has no field the contract lacks)
    const text = JSON.stringify(answered)
    for (const name of [...candidates.flatMap((c) => [c.id, c.name]), ...paths]) {
      expect(text).not.toContain(name)
    }
    expect(JSON.stringify(await getCase(id, caseId))).not.toContain(candidates[0]!.name)

    const [first, second, third] = answered.responses
    const draft = await review(id, caseId, {
      revision: answered.revision,
      confirm: false,
      review: { verdicts: { [first!.id]: "correct" }, reference: "30 days", notes: "" }
    })
    expect(draft).toMatchObject({ review_state: "draft", review: { state: "draft", reference: "30 days" } })
    expect(draft.responses[0]!.model).toBeNull()

    const incomplete = await expectError(review(id, caseId, {
      revision: draft.revision,
      confirm: true,
      review: { verdicts: { [first!.id]: "correct" }, reference: "30 days", notes: "" }
    }), 400, "invalid_verdicts")
    expect((incomplete.error.details?.["response_ids"] as Array<string>).sort()).toEqual([second!.id, third!.id].sort())

    const confirmed = await review(id, caseId, {
      revision: draft.revision,
      confirm: true,
      review: { verdicts: { [first!.id]: "correct", [second!.id]: "incorrect", [third!.id]: "correct" }, reference: "30 days", notes: "ok" }
    })
    expect(confirmed.review_state).toBe("confirmed")
    const revealed = new Map(confirmed.responses.map((r) => [r.id, r.model!.name]))
    expect(new Set(revealed.values())).toEqual(new Set(candidates.map((c) => c.name)))
    expect(confirmed.history.map((h) => [h.revision, h.confirmed])).toEqual([
      [confirmed.revision, true],
      [draft.revision, false]
    ])

    const ranked = await summary(id)
    expect(ranked).toMatchObject({
      default_prompt: "Answer briefly.",
      candidate_count: 3,
      total: 1,
      pending: 0,
      current_pending: 0,
      next_pending_case: null,
      next_offset: null,
      ranking: { confirmed: 1, comparable: 1 }
    })
    const byName = new Map(ranked.ranking.rows.map((r) => [r.name, r]))
    const wrong = revealed.get(second!.id)!
    expect(byName.get(wrong)).toMatchObject({ correct: 0, total: 1, score: 0, rank: 3 })
    expect(ranked.ranking.rows.filter((r) => r.rank === 1)).toHaveLength(2)

    // each generated response is a trace with source `manual`
    await expect.poll(async () =>
      (await query(podium.databaseUrl, (sql) =>
        sql`SELECT count(*)::int AS n FROM traces WHERE leaderboard_id = ${id} AND source = 'manual'`))[0]!["n"], {
      timeout: 5_000
    }).toBe(3)

    await expectError(generated(id, caseId), 409, "immutable_case", "generate again")
    await expectError(saveConfig(id, caseId, { revision: confirmed.revision, prompt_override: null }), 409, "immutable_case", "edit")

    // a later draft withdraws the case from the ranking until it is confirmed again; the models stay revealed
    const withdrawn = await review(id, caseId, {
      revision: confirmed.revision,
      confirm: false,
      review: { verdicts: {}, reference: "30 days", notes: "rethinking" }
    })
    expect(withdrawn).toMatchObject({ review_state: "draft", revision: confirmed.revision + 1 })
    expect(withdrawn.responses[0]!.model).not.toBeNull()
    const after = await summary(id)
    expect(after).toMatchObject({ pending: 1, current_pending: 1, next_pending_case: caseId, ranking: { confirmed: 0, comparable: 0 } })
    expect(after.ranking.rows.every((r) => r.score === null)).toBe(true)
  })

  it("20 simultaneous generate calls on one draft make one provider call per candidate", async () => {
    const paths = ["r-1", "r-2", "r-3", "r-4"]
    const { id } = await leaderboard(paths)
    const caseId = (await newCase(id)).body.id
    const replies = await Promise.allSettled(Array.from({ length: 20 }, () => generated(id, caseId)))
    expect(replies.filter((r) => r.status === "fulfilled")).toHaveLength(1)
    const refused = replies.flatMap((r) => r.status === "rejected" ? [r.reason as unknown] : [])
    expect(refused).toHaveLength(19)
    for (const failure of refused) {
      expect(failure).toBeInstanceOf(ApiFailure)
      expect((failure as ApiFailure).status).toBe(409)
      expect(["generation_in_progress", "immutable_case"]).toContain((failure as ApiFailure).error.code)
    }
    expect(paths.map(callsTo)).toEqual([1, 1, 1, 1])
  })

  it("a provider failure is stored on its response and the others are kept", async () => {
    const { id } = await leaderboard(["f-ok", "refused"])
    const caseId = (await newCase(id)).body.id
    const answered = await generated(id, caseId)
    expect(answered.responses.map((r) => r.status).sort()).toEqual(["failed", "succeeded"])
    const failed = answered.responses.find((r) => r.status === "failed")!
    expect(failed).toMatchObject({ output: null, error: "The provider failed to answer", model: null })
    const ok = answered.responses.find((r) => r.status === "succeeded")!
    await expectError(review(id, caseId, {
      revision: answered.revision,
      confirm: true,
      review: { verdicts: { [ok.id]: "correct", [failed.id]: "incorrect" }, reference: "", notes: "" }
    }), 400, "invalid_verdicts", "a verdict on the failed response")
    const confirmed = await review(id, caseId, {
      revision: answered.revision,
      confirm: true,
      review: { verdicts: { [ok.id]: "correct" }, reference: "", notes: "" }
    })
    expect(confirmed.responses.find((r) => r.status === "failed")!.error).toContain("could not reach")
    const ranked = await summary(id)
    expect(ranked.ranking).toMatchObject({ confirmed: 1, comparable: 0 })
    expect(ranked.ranking.rows.map((r) => r.technical_errors).sort()).toEqual([0, 1])
  })

  it("an answer holding U+0000 and a lone surrogate is stored with U+FFFD and the case is generated", async () => {
    const { id } = await leaderboard(["nul-a", "nul-b"])
    const caseId = (await newCase(id, { input: "Say something odd" })).body.id
    fake.mode = "poison"
    const answered = await generated(id, caseId).finally(() => fake.mode = "ok")
    expect(answered.status).toBe("generated")
    for (const r of answered.responses) {
      expect(r).toMatchObject({ status: "succeeded", output: "poison: \uFFFD \uFFFD Say something odd" })
    }
  })

  it("a draft made before the candidates changed cannot be generated", async () => {
    const { id } = await leaderboard(["c-1", "c-2"])
    const caseId = (await newCase(id)).body.id
    await owner.api((c) =>
      c.leaderboards.addModel({ params: { leaderboard_id: id }, payload: aCandidate(`${fake.url}/c-3`, { name: "late" }) })
    )
    await expectError(generated(id, caseId), 409, "configuration_changed")
    expect(callsTo("c-1")).toBe(0)
    expect((await getCase(id, caseId)).current).toBe(false)
  })

  it("only members' sessions, on human leaderboards with 2 to 8 candidates", async () => {
    const { id } = await leaderboard(["g-1", "g-2"])
    const token = client(podium, await apiToken(owner.api, ["leaderboards:read"], { name: "t" }))
    await expectError(summary(id, token), 401, "unauthorized", "API token")
    const stranger = client(podium, await session("human-stranger"))
    await expectError(summary(id, stranger), 404, "not_found", "stranger")
    await expectError(getCase(id, CaseId.make(randomUUID())), 404, "not_found", "unknown case")

    const exact = (await owner.api((c) => c.leaderboards.create({ payload: { name: "exact", dataset_type: "PUSH" } }))).leaderboard.id
    await expectError(summary(exact), 409, "wrong_eval_type")
    const lonely = await leaderboard(["g-3"])
    const one = await expectError(newCase(lonely.id), 409, "invalid_candidate_count")
    expect(one.error).toMatchObject({ code: "invalid_candidate_count", details: { count: 1 } })
  })

  it("limits: 32,000 characters of input, context, prompt and reference; 8,000 of notes", async () => {
    const { id } = await leaderboard(["l-1", "l-2"])
    const cases = `${H(id)}/cases`
    for (const field of ["input", "context", "prompt_override"]) {
      const payload = { ...aCase(), [field]: "x".repeat(32_001) }
      await expectValidation(sendUnchecked("POST", cases, payload), ["payload", field], field)
    }
    expect((await newCase(id, { input: "x".repeat(32_000), context: "y".repeat(32_000) })).status).toBe(201)
    await expectError(sendUnchecked("POST", cases, aCase({ input: "   " })), 400, "validation_failed", "blank input")
    const caseId = (await newCase(id)).body.id
    const { revision } = await generated(id, caseId)
    for (const [field, size] of [["reference", 32_001], ["notes", 8_001]] as const) {
      const payload = { revision, confirm: false, review: { ...noReview, [field]: "z".repeat(size) } }
      await expectValidation(sendUnchecked("PUT", `${cases}/${caseId}/review`, payload), ["payload", "review", field], field)
    }
  })

  it("the summary pages 50 cases at a time; pending counts cover every page", async () => {
    const { id } = await leaderboard(["p-1", "p-2"])
    const ids: Array<CaseId> = []
    for (let i = 0; i < 55; i++) ids.push((await newCase(id, { input: `question ${i}` })).body.id)
    const first = await summary(id)
    expect(first).toMatchObject({ total: 55, pending: 55, current_pending: 55, next_pending_case: ids[0], next_offset: 50 })
    expect(first.cases).toHaveLength(50)
    const second = await owner.api((c) => c.human.summary({ params: { leaderboard_id: id }, query: { offset: 50 } }))
    expect(second.cases.map((c) => c.id)).toEqual(ids.slice(50))
    expect(second).toMatchObject({ next_offset: null, pending: 55 })
    await expectError(sendUnchecked("GET", `${H(id)}/?offset=-1`), 400, "validation_failed")
  })

  it("the export lists confirmed cases with a reference or an accepted answer, never document bytes", async () => {
    const { candidates, id } = await leaderboard(["x-1", "x-2"])
    const confirm = async (input: string, verdict: "correct" | "incorrect", reference: string, confirmIt = true) => {
      const caseId = (await newCase(id, { input, context: "ctx" })).body.id
      const answered = await generated(id, caseId)
      const verdicts = verdictsOn(answered.responses, verdict)
      await review(id, caseId, { revision: answered.revision, confirm: confirmIt, review: { verdicts, reference, notes: "n" } })
      return { caseId, responses: answered.responses }
    }
    const accepted = await confirm("accepted", "correct", "")
    const referenced = await confirm("referenced", "incorrect", "the right answer")
    await confirm("neither", "incorrect", "")
    await confirm("unconfirmed", "correct", "ref", false)

    const exported = await owner.api((c) => c.human.export({ params: { leaderboard_id: id } }))
    expect(Array.isArray(exported)).toBe(true)
    expect(exported.map((r) => r.input)).toEqual(["accepted", "referenced"])
    const [first, second] = exported
    expect(first).toMatchObject({ case_id: accepted.caseId, context: "ctx", prompt: "Answer briefly.", reference: "", notes: "n", current: true, attachments: [] })
    expect(first!.accepted_answers.map((a) => a.response_id).sort()).toEqual(accepted.responses.map((r) => r.id).sort())
    expect(new Set(first!.accepted_answers.map((a) => a.name))).toEqual(new Set(candidates.map((c) => c.name)))
    expect(first!.accepted_answers[0]!.output).toBe("echo: Context:\nctx\n\naccepted")
    expect(second).toMatchObject({ case_id: referenced.caseId, reference: "the right answer", accepted_answers: [] })
  })

  it("the ranking's winner is what ranking_winner serves; withdrawing its review does not take it back", async () => {
    const { id } = await leaderboard(["w-1", "w-2"])
    const serving = client(podium, await apiToken(owner.api, ["leaderboards:inference"], { name: "serving" }))
    const servedBy = async () => {
      const [, response] = await serving((c) =>
        c.inference.infer({ params: { leaderboard_id: id }, payload: { input: "hi" }, responseMode: "decoded-and-response" })
      )
      return response.headers["x-service-leaderboard-model-id"]
    }
    const caseId = (await newCase(id)).body.id
    const answered = await generated(id, caseId)
    const [a, b] = answered.responses
    const confirmed = await review(id, caseId, {
      revision: answered.revision,
      confirm: true,
      review: { verdicts: { [a!.id]: "correct", [b!.id]: "incorrect" }, reference: "", notes: "" }
    })
    const winnerId = confirmed.responses[0]!.model!.leaderboard_model_id
    const loserId = confirmed.responses[1]!.model!.leaderboard_model_id
    await choose(owner.api, id, loserId, "ranking_winner")
    expect(await servedBy()).toBe(winnerId)

    // withdrawn: no candidate has a score, which is no reason to switch; the ranking's winner stays
    await review(id, caseId, { revision: confirmed.revision, confirm: false, review: noReview })
    expect(await servedBy()).toBe(winnerId)
  })

  it("a few verdicts for another candidate do not switch serving below min_rows; the summary shows them tied", async () => {
    const { id } = await leaderboard(["p-1", "p-2"])
    const history = async () =>
      (await owner.api((c) => c.leaderboards.servingHistory({ params: { leaderboard_id: id }, query: {} }))).data
    /** Confirms a case: first blind with both answers wrong (which reveals the models), then `right` gets it right. */
    const confirmCase = async (right: (candidateId: string) => boolean) => {
      const caseId = (await newCase(id)).body.id
      const answered = await generated(id, caseId)
      const revealed = await review(id, caseId, {
        revision: answered.revision,
        confirm: true,
        review: { verdicts: verdictsOn(answered.responses, "incorrect"), reference: "", notes: "" }
      })
      const verdicts = Object.fromEntries(
        revealed.responses.map((r) => [r.id, right(r.model!.leaderboard_model_id) ? "correct" : "incorrect"] as const)
      )
      return review(id, caseId, { revision: revealed.revision, confirm: true, review: { verdicts, reference: "", notes: "" } })
    }

    // the first confirmed case names the first to serve (nothing served before)
    await confirmCase(() => false)
    const [first] = await history()
    expect(first).toMatchObject({ kind: "human", from_candidate_id: null, actor: { type: "user" } })
    const serving = first!.to_candidate_id!
    // then serving is right on one case and the other on three: 1 win against 3, 5 common cases of the 30 needed
    await confirmCase((c) => c === serving)
    for (let n = 0; n < 3; n++) await confirmCase((c) => c !== serving)

    const s = await summary(id)
    const other = s.cohort.map((c) => c.leaderboard_model_id).find((c) => c !== serving)!
    expect(s.ranking.comparable).toBe(5)
    expect(s.ranking.common_rows.map((r) => [r.leaderboard_model_id, r.correct, r.total])).toEqual([[other, 3, 5], [serving, 1, 5]])
    // still served, and only the first decision is in the history (a keep is not recorded)
    expect((await history()).map((e) => [e.kind, e.to_candidate_id])).toEqual([["human", serving]])
    expect(s.serving_decision).toMatchObject({
      action: "keep",
      from_candidate_id: serving,
      to_candidate_id: serving,
      shared_rows: 5,
      p_value: 0.625 // scipy.stats.binomtest(1, 4, 0.5).pvalue, one pair so Holm leaves it
    })
    expect(s.serving_decision.reason).toContain("5 shared rows, 30 needed")
    expect(s.ranking.paired.alpha).toBe(0.05)
    expect(s.ranking.paired.candidates).toEqual(s.cohort.map(({ leaderboard_model_id }) => ({
      leaderboard_model_id,
      statistically_tied_with: [leaderboard_model_id === serving ? other : serving],
      rank_band: { best: 1, worst: 2 }
    })))
    const [pair] = s.ranking.paired.pairwise
    const servingIsA = pair!.a === serving
    expect(pair).toMatchObject({
      a: servingIsA ? serving : other,
      b: servingIsA ? other : serving,
      wins: servingIsA ? 1 : 3,
      losses: servingIsA ? 3 : 1,
      ties: 1,
      p_value: 0.625,
      p_adjusted: 0.625
    })
    expect(pair!.difference!.estimate).toBeCloseTo(servingIsA ? -0.4 : 0.4, 12)
  })

  it("nine candidates are too many; the case detail shows the newest 100 review saves", async () => {
    const nine = await leaderboard(["n-1", "n-2", "n-3", "n-4", "n-5", "n-6", "n-7", "n-8", "n-9"])
    const refused = await expectError(summary(nine.id), 409, "invalid_candidate_count")
    expect(refused.error).toMatchObject({ code: "invalid_candidate_count", details: { count: 9 } })

    const { id } = await leaderboard(["hist-1", "hist-2"])
    const caseId = (await newCase(id)).body.id
    let { revision } = await generated(id, caseId)
    for (let i = 0; i < 102; i++) {
      revision = (await review(id, caseId, { revision, confirm: false, review: { ...noReview, reference: `draft ${i}` } })).revision
    }
    const detail = await getCase(id, caseId)
    expect(detail.history).toHaveLength(100)
    expect(detail.history[0]).toMatchObject({ revision, reference: "draft 101", confirmed: false })
    expect(detail.history.at(-1)!.reference).toBe("draft 2")
  })

  it("every route refuses a missing credential or an API token with 401, and malformed bodies with 400, in the error body", async () => {
    const { id: leaderboard_id } = await leaderboard(["b-1", "b-2"])
    const case_id = CaseId.make(randomUUID())
    const params = { leaderboard_id, case_id }
    const routes: Record<string, (api: Caller) => Promise<unknown>> = {
      summary: (api) => api((c) => c.human.summary({ params: { leaderboard_id }, query: {} })),
      export: (api) => api((c) => c.human.export({ params: { leaderboard_id } })),
      documents: (api) => api((c) => c.human.documents({ params: { leaderboard_id } })),
      upload: (api) => api((c) => c.human.uploadDocument({ params: { leaderboard_id }, payload: aDocument("a", { name: "a.txt" }) })),
      archive: (api) => api((c) => c.human.archiveDocument({ params: { leaderboard_id, document_id: DocumentId.make(randomUUID()) } })),
      createCase: (api) => api((c) => c.human.createCase({ params: { leaderboard_id }, payload: aCase({ id: case_id, input: "q" }) })),
      getCase: (api) => api((c) => c.human.getCase({ params })),
      saveConfig: (api) => api((c) => c.human.saveConfig({ params, payload: { revision: 1, prompt_override: null } })),
      generate: (api) => api((c) => c.human.generate({ params, payload: {} })),
      saveReview: (api) => api((c) => c.human.saveReview({ params, payload: { revision: 1, confirm: false, review: noReview } }))
    }
    const notHere = client(podium, await apiToken(owner.api, undefined, { name: "not here" }))
    for (const [label, call] of Object.entries(routes)) {
      for (const api of [client(podium), notHere]) {
        const refused = await expectError(call(api), 401, "unauthorized", label)
        expect(refused.headers["www-authenticate"], label).toBe("Bearer")
      }
    }
    const base = H(leaderboard_id)
    const bodies: Array<[string, string, Record<string, unknown>]> = [
      ["POST", `${base}/documents`, { id: randomUUID(), name: "a.txt", scope: "case", data: "YQ==" }],
      ["POST", `${base}/cases`, { id: case_id, input: "q" }],
      ["PUT", `${base}/cases/${case_id}/config`, { revision: 1, prompt_override: null }],
      ["POST", `${base}/cases/${case_id}/generate`, {}],
      ["PUT", `${base}/cases/${case_id}/review`, { revision: 1, confirm: false, review: noReview }]
    ]
    for (const [method, path, json] of bodies) {
      const label = `${method} ${path}`
      // Bytes that are not JSON, which no client of the contract sends.
      const malformed = unchecked(podium, method, path, { token: owner.session, body: "{not json", headers: { "content-type": "application/json" } })
      await expectError(malformed, 400, "validation_failed", label)
      if (Object.keys(json).length === 0) continue // generate's body has no fields to get wrong
      await expectError(sendUnchecked(method, path, { ...json, revision: "one", id: "not-a-uuid" }), 400, "validation_failed", label)
    }
    await expectValidation(sendUnchecked("GET", `${base}/cases/not-a-uuid`), ["params", "case_id"])
  })
})
