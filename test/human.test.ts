import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

let fake: OpenAiFake
let podium: Podium
let owner: string

beforeAll(async () => {
  fake = await startOpenAiFake()
  podium = await startPodium()
  owner = await session("human-owner")
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

const H = (id: string) => `/api/leaderboards/${id}/human`

/** A human leaderboard whose candidates answer at `{fake}/{path}` (a path of "refused" cannot be reached). */
const humanLeaderboard = async (paths: ReadonlyArray<string>, json: Record<string, unknown> = {}) => {
  const id = (await podium.request("POST", "/api/leaderboards", {
    token: owner,
    json: { name: "blind", eval_type: "human", dataset_type: "PUSH", system_prompt: "Answer briefly.", ...json }
  })).body.leaderboard.id as string
  const candidates: Array<{ id: string; name: string; path: string }> = []
  for (const path of paths) {
    const name = `secret-model-${path}`
    const url = path === "refused" ? "http://127.0.0.1:1/v1" : `${fake.url}/${path}`
    const reply = await podium.request("POST", `/api/leaderboards/${id}/models`, {
      token: owner,
      json: { name, platform: "Custom", url, auth_type: "none" }
    })
    expect(reply.status).toBe(201)
    candidates.push({ id: reply.body.model.id, name, path })
  }
  return { id, candidates }
}

const newCase = (leaderboard: string, json: Record<string, unknown> = {}) =>
  podium.request("POST", `${H(leaderboard)}/cases`, { token: owner, json: { id: crypto.randomUUID(), input: "Refund window?", ...json } })
const generate = (leaderboard: string, caseId: string) =>
  podium.request("POST", `${H(leaderboard)}/cases/${caseId}/generate`, { token: owner, json: {} })
const review = (leaderboard: string, caseId: string, json: Record<string, unknown>) =>
  podium.request("PUT", `${H(leaderboard)}/cases/${caseId}/review`, { token: owner, json })
const callsTo = (path: string) => fake.seen.filter((s) => s.path === `/${path}/chat/completions`).length

describe("human evaluation", () => {
  it("a case goes draft → generated → reviewed blind → confirmed, which reveals the models", async () => {
    const { candidates, id } = await humanLeaderboard(["h-a", "h-b", "h-c"])
    const caseId = crypto.randomUUID()
    const created = await newCase(id, { id: caseId, context: "Order 42", prompt_override: null })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ id: caseId, status: "draft", revision: 1, prompt: "Answer briefly.", responses: [], current: true })

    const retry = await newCase(id, { id: caseId, context: "Order 42" })
    expect(retry.status).toBe(200)
    expect(retry.body.id).toBe(caseId)
    const reused = await newCase(id, { id: caseId, context: "Order 43" })
    expect(reused.status).toBe(409)
    expect(reused.body.error.code).toBe("id_reused")

    const stale = await podium.request("PUT", `${H(id)}/cases/${caseId}/config`, { token: owner, json: { revision: 9, prompt_override: "x" } })
    expect(stale.status).toBe(409)
    expect(stale.body.error).toMatchObject({ code: "stale_revision", details: { current_revision: 1 } })
    const configured = await podium.request("PUT", `${H(id)}/cases/${caseId}/config`, { token: owner, json: { revision: 1, prompt_override: "Be exact." } })
    expect(configured.body).toMatchObject({ revision: 2, prompt: "Be exact.", prompt_override: "Be exact." })

    const notYet = await review(id, caseId, { revision: 2, confirm: false, review: { verdicts: {}, reference: "", notes: "" } })
    expect(notYet.status).toBe(409)
    expect(notYet.body.error.code).toBe("case_not_generated")

    const generated = await generate(id, caseId)
    expect(generated.status).toBe(200)
    expect(generated.body).toMatchObject({ status: "generated", response_total: 3, review_state: "none" })
    expect(generated.body.responses.map((r: { label: string }) => r.label)).toEqual(["A", "B", "C"])
    for (const r of generated.body.responses) {
      expect(r).toMatchObject({ status: "succeeded", model: null, cost_usd: null })
      expect(r.output).toBe("echo: Context:\nOrder 42\n\nRefund window?")
    }
    expect(fake.seen.at(-1)!.body.messages[0]).toEqual({ role: "system", content: "Be exact." })
    // blind: nothing in the answer names a model
    for (const c of candidates) {
      expect(generated.text).not.toContain(c.id)
      expect(generated.text).not.toContain(c.name)
      expect(generated.text).not.toContain(c.path)
    }
    expect(JSON.stringify((await podium.request("GET", `${H(id)}/cases/${caseId}`, { token: owner })).body)).not.toContain(candidates[0]!.name)

    const [first, second, third] = generated.body.responses as Array<{ id: string }>
    const draft = await review(id, caseId, {
      revision: generated.body.revision,
      confirm: false,
      review: { verdicts: { [first!.id]: "correct" }, reference: "30 days", notes: "" }
    })
    expect(draft.body).toMatchObject({ review_state: "draft", review: { state: "draft", reference: "30 days" } })
    expect(draft.body.responses[0].model).toBeNull()

    const incomplete = await review(id, caseId, {
      revision: draft.body.revision,
      confirm: true,
      review: { verdicts: { [first!.id]: "correct" }, reference: "30 days", notes: "" }
    })
    expect(incomplete.status).toBe(400)
    expect(incomplete.body.error).toMatchObject({ code: "invalid_verdicts" })
    expect(incomplete.body.error.details.response_ids.sort()).toEqual([second!.id, third!.id].sort())

    const confirmed = await review(id, caseId, {
      revision: draft.body.revision,
      confirm: true,
      review: { verdicts: { [first!.id]: "correct", [second!.id]: "incorrect", [third!.id]: "correct" }, reference: "30 days", notes: "ok" }
    })
    expect(confirmed.status).toBe(200)
    expect(confirmed.body.review_state).toBe("confirmed")
    const revealed = new Map(confirmed.body.responses.map((r: { id: string; model: { name: string } }) => [r.id, r.model.name]))
    expect(new Set(revealed.values())).toEqual(new Set(candidates.map((c) => c.name)))
    expect(confirmed.body.history.map((h: { revision: number; confirmed: boolean }) => [h.revision, h.confirmed])).toEqual([
      [confirmed.body.revision, true],
      [draft.body.revision, false]
    ])

    const summary = await podium.request("GET", `${H(id)}/`, { token: owner })
    expect(summary.status).toBe(200)
    expect(summary.body).toMatchObject({
      default_prompt: "Answer briefly.",
      candidate_count: 3,
      total: 1,
      pending: 0,
      current_pending: 0,
      next_pending_case: null,
      next_offset: null,
      ranking: { confirmed: 1, comparable: 1 }
    })
    const byName = new Map(summary.body.ranking.rows.map((r: { name: string }) => [r.name, r]))
    const wrong = revealed.get(second!.id)
    expect(byName.get(wrong)).toMatchObject({ correct: 0, total: 1, score: 0, rank: 3 })
    expect(summary.body.ranking.rows.filter((r: { rank: number }) => r.rank === 1)).toHaveLength(2)

    // each generated response is a trace with source `manual`
    await expect.poll(async () =>
      (await query(podium.databaseUrl, (sql) =>
        sql`SELECT count(*)::int AS n FROM traces WHERE leaderboard_id = ${id} AND source = 'manual'`))[0]!["n"], {
      timeout: 5_000
    }).toBe(3)

    const again = await generate(id, caseId)
    expect(again.status).toBe(409)
    expect(again.body.error.code).toBe("immutable_case")
    const edit = await podium.request("PUT", `${H(id)}/cases/${caseId}/config`, { token: owner, json: { revision: confirmed.body.revision, prompt_override: null } })
    expect(edit.body.error.code).toBe("immutable_case")

    // a later draft withdraws the case from the ranking until it is confirmed again; the models stay revealed
    const withdrawn = await review(id, caseId, {
      revision: confirmed.body.revision,
      confirm: false,
      review: { verdicts: {}, reference: "30 days", notes: "rethinking" }
    })
    expect(withdrawn.body).toMatchObject({ review_state: "draft", revision: confirmed.body.revision + 1 })
    expect(withdrawn.body.responses[0].model).not.toBeNull()
    const after = await podium.request("GET", `${H(id)}/`, { token: owner })
    expect(after.body).toMatchObject({ pending: 1, current_pending: 1, next_pending_case: caseId, ranking: { confirmed: 0, comparable: 0 } })
    expect(after.body.ranking.rows.every((r: { score: number | null }) => r.score === null)).toBe(true)
  })

  it("20 simultaneous generate calls on one draft make one provider call per candidate", async () => {
    const paths = ["r-1", "r-2", "r-3", "r-4"]
    const { id } = await humanLeaderboard(paths)
    const caseId = (await newCase(id)).body.id as string
    const replies = await Promise.all(Array.from({ length: 20 }, () => generate(id, caseId)))
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1)
    const refused = replies.filter((r) => r.status !== 200)
    expect(refused).toHaveLength(19)
    for (const r of refused) {
      expect(r.status).toBe(409)
      expect(["generation_in_progress", "immutable_case"]).toContain(r.body.error.code)
    }
    expect(paths.map(callsTo)).toEqual([1, 1, 1, 1])
  })

  it("a provider failure is stored on its response and the others are kept", async () => {
    const { id } = await humanLeaderboard(["f-ok", "refused"])
    const caseId = (await newCase(id)).body.id as string
    const generated = await generate(id, caseId)
    expect(generated.status).toBe(200)
    const statuses = generated.body.responses.map((r: { status: string }) => r.status).sort()
    expect(statuses).toEqual(["failed", "succeeded"])
    const failed = generated.body.responses.find((r: { status: string }) => r.status === "failed")
    expect(failed).toMatchObject({ output: null, error: "The provider failed to answer", model: null })
    const ok = generated.body.responses.find((r: { status: string }) => r.status === "succeeded")
    const withVerdictOnFailed = await review(id, caseId, {
      revision: generated.body.revision,
      confirm: true,
      review: { verdicts: { [ok.id]: "correct", [failed.id]: "incorrect" }, reference: "", notes: "" }
    })
    expect(withVerdictOnFailed.status).toBe(400)
    const confirmed = await review(id, caseId, {
      revision: generated.body.revision,
      confirm: true,
      review: { verdicts: { [ok.id]: "correct" }, reference: "", notes: "" }
    })
    expect(confirmed.status).toBe(200)
    expect(confirmed.body.responses.find((r: { status: string }) => r.status === "failed").error).toContain("could not reach")
    const summary = await podium.request("GET", `${H(id)}/`, { token: owner })
    expect(summary.body.ranking).toMatchObject({ confirmed: 1, comparable: 0 })
    expect(summary.body.ranking.rows.map((r: { technical_errors: number }) => r.technical_errors).sort()).toEqual([0, 1])
  })

  it("an answer holding U+0000 and a lone surrogate is stored with U+FFFD and the case is generated", async () => {
    const { id } = await humanLeaderboard(["nul-a", "nul-b"])
    const caseId = (await newCase(id, { input: "Say something odd" })).body.id as string
    fake.mode = "poison"
    const generated = await generate(id, caseId).finally(() => fake.mode = "ok")
    expect(generated.status).toBe(200)
    expect(generated.body.status).toBe("generated")
    for (const r of generated.body.responses) {
      expect(r).toMatchObject({ status: "succeeded", output: "poison: \uFFFD \uFFFD Say something odd" })
    }
  })

  it("a draft made before the candidates changed cannot be generated", async () => {
    const { id } = await humanLeaderboard(["c-1", "c-2"])
    const caseId = (await newCase(id)).body.id as string
    await podium.request("POST", `/api/leaderboards/${id}/models`, {
      token: owner,
      json: { name: "late", platform: "Custom", url: `${fake.url}/c-3`, auth_type: "none" }
    })
    const refused = await generate(id, caseId)
    expect(refused.status).toBe(409)
    expect(refused.body.error.code).toBe("configuration_changed")
    expect(callsTo("c-1")).toBe(0)
    expect((await podium.request("GET", `${H(id)}/cases/${caseId}`, { token: owner })).body.current).toBe(false)
  })

  it("only members' sessions, on human leaderboards with 2 to 8 candidates", async () => {
    const { id } = await humanLeaderboard(["g-1", "g-2"])
    const token = (await podium.request("POST", "/api/tokens", { token: owner, json: { name: "t", scopes: ["leaderboards:read"] } })).body.secret
    expect((await podium.request("GET", `${H(id)}/`, { token })).status).toBe(401)
    const stranger = await session("human-stranger")
    expect((await podium.request("GET", `${H(id)}/`, { token: stranger })).status).toBe(404)
    expect((await podium.request("GET", `${H(id)}/cases/${crypto.randomUUID()}`, { token: owner })).status).toBe(404)

    const exact = (await podium.request("POST", "/api/leaderboards", { token: owner, json: { name: "exact", dataset_type: "PUSH" } })).body.leaderboard.id
    const wrongType = await podium.request("GET", `${H(exact)}/`, { token: owner })
    expect(wrongType.status).toBe(409)
    expect(wrongType.body.error.code).toBe("wrong_eval_type")
    const lonely = await humanLeaderboard(["g-3"])
    const one = await newCase(lonely.id)
    expect(one.status).toBe(409)
    expect(one.body.error).toMatchObject({ code: "invalid_candidate_count", details: { count: 1 } })
  })

  it("limits: 32,000 characters of input, context, prompt and reference; 8,000 of notes", async () => {
    const { id } = await humanLeaderboard(["l-1", "l-2"])
    for (const field of ["input", "context", "prompt_override"]) {
      const reply = await newCase(id, { [field]: "x".repeat(32_001) })
      expect(reply.status).toBe(400)
      expect(reply.body.error.details.issues[0].path).toEqual(["payload", field])
    }
    expect((await newCase(id, { input: "x".repeat(32_000), context: "y".repeat(32_000) })).status).toBe(201)
    expect((await newCase(id, { input: "   " })).status).toBe(400)
    const caseId = (await newCase(id)).body.id as string
    const generated = await generate(id, caseId)
    for (const [field, size] of [["reference", 32_001], ["notes", 8_001]] as const) {
      const reply = await review(id, caseId, {
        revision: generated.body.revision,
        confirm: false,
        review: { verdicts: {}, reference: "", notes: "", [field]: "z".repeat(size) }
      })
      expect(reply.status).toBe(400)
      expect(reply.body.error.details.issues[0].path).toEqual(["payload", "review", field])
    }
  })

  it("the summary pages 50 cases at a time; pending counts cover every page", async () => {
    const { id } = await humanLeaderboard(["p-1", "p-2"])
    const ids: Array<string> = []
    for (let i = 0; i < 55; i++) ids.push((await newCase(id, { input: `question ${i}` })).body.id)
    const first = await podium.request("GET", `${H(id)}/`, { token: owner })
    expect(first.body).toMatchObject({ total: 55, pending: 55, current_pending: 55, next_pending_case: ids[0], next_offset: 50 })
    expect(first.body.cases).toHaveLength(50)
    const second = await podium.request("GET", `${H(id)}/?offset=50`, { token: owner })
    expect(second.body.cases.map((c: { id: string }) => c.id)).toEqual(ids.slice(50))
    expect(second.body).toMatchObject({ next_offset: null, pending: 55 })
    expect((await podium.request("GET", `${H(id)}/?offset=-1`, { token: owner })).status).toBe(400)
  })
  it("the export lists confirmed cases with a reference or an accepted answer, never document bytes", async () => {
    const { candidates, id } = await humanLeaderboard(["x-1", "x-2"])
    const confirm = async (input: string, verdict: "correct" | "incorrect", reference: string, confirmIt = true) => {
      const caseId = (await newCase(id, { input, context: "ctx" })).body.id as string
      const generated = await generate(id, caseId)
      const verdicts = Object.fromEntries(generated.body.responses.map((r: { id: string }) => [r.id, verdict]))
      await review(id, caseId, { revision: generated.body.revision, confirm: confirmIt, review: { verdicts, reference, notes: "n" } })
      return { caseId, responses: generated.body.responses as Array<{ id: string; output: string }> }
    }
    const accepted = await confirm("accepted", "correct", "")
    const referenced = await confirm("referenced", "incorrect", "the right answer")
    await confirm("neither", "incorrect", "")
    await confirm("unconfirmed", "correct", "ref", false)

    const exported = await podium.request("GET", `${H(id)}/export`, { token: owner })
    expect(exported.status).toBe(200)
    expect(Array.isArray(exported.body)).toBe(true)
    expect(exported.body.map((r: { input: string }) => r.input)).toEqual(["accepted", "referenced"])
    const [first, second] = exported.body
    expect(first).toMatchObject({ case_id: accepted.caseId, context: "ctx", prompt: "Answer briefly.", reference: "", notes: "n", current: true, attachments: [] })
    expect(first.accepted_answers.map((a: { response_id: string }) => a.response_id).sort()).toEqual(accepted.responses.map((r) => r.id).sort())
    expect(new Set(first.accepted_answers.map((a: { name: string }) => a.name))).toEqual(new Set(candidates.map((c) => c.name)))
    expect(first.accepted_answers[0].output).toBe("echo: Context:\nctx\n\naccepted")
    expect(second).toMatchObject({ case_id: referenced.caseId, reference: "the right answer", accepted_answers: [] })
  })
  it("the common rows' winner is what ranking_winner serves, as soon as reviews change", async () => {
    const { id } = await humanLeaderboard(["w-1", "w-2"])
    const token = (await podium.request("POST", "/api/tokens", {
      token: owner,
      json: { name: "serving", scopes: ["leaderboards:inference"] }
    })).body.secret as string
    const servedBy = async () =>
      (await podium.request("POST", `/v1/leaderboard/${id}/inference`, { token, json: { input: "hi" } }))
        .headers.get("x-service-leaderboard-model-id")
    const caseId = (await newCase(id)).body.id as string
    const generated = await generate(id, caseId)
    const [a, b] = generated.body.responses as Array<{ id: string }>
    const confirmed = await review(id, caseId, {
      revision: generated.body.revision,
      confirm: true,
      review: { verdicts: { [a!.id]: "correct", [b!.id]: "incorrect" }, reference: "", notes: "" }
    })
    const winnerId = confirmed.body.responses[0].model.leaderboard_model_id as string
    const loserId = confirmed.body.responses[1].model.leaderboard_model_id as string
    await podium.request("PATCH", `/api/leaderboards/${id}`, {
      token: owner,
      json: { chosen_model_strategy: "ranking_winner", chosen_leaderboard_model_id: loserId }
    })
    expect(await servedBy()).toBe(winnerId)

    await review(id, caseId, { revision: confirmed.body.revision, confirm: false, review: { verdicts: {}, reference: "", notes: "" } })
    expect(await servedBy()).toBe(loserId) // no confirmed case: no winner, the chosen candidate serves
  })
  it("nine candidates are too many; the case detail shows the newest 100 review saves", async () => {
    const nine = await humanLeaderboard(["n-1", "n-2", "n-3", "n-4", "n-5", "n-6", "n-7", "n-8", "n-9"])
    const refused = await podium.request("GET", `${H(nine.id)}/`, { token: owner })
    expect(refused.status).toBe(409)
    expect(refused.body.error).toMatchObject({ code: "invalid_candidate_count", details: { count: 9 } })

    const { id } = await humanLeaderboard(["hist-1", "hist-2"])
    const caseId = (await newCase(id)).body.id as string
    let revision = (await generate(id, caseId)).body.revision as number
    for (let i = 0; i < 102; i++) {
      const saved = await review(id, caseId, { revision, confirm: false, review: { verdicts: {}, reference: `draft ${i}`, notes: "" } })
      revision = saved.body.revision
    }
    const detail = await podium.request("GET", `${H(id)}/cases/${caseId}`, { token: owner })
    expect(detail.body.history).toHaveLength(100)
    expect(detail.body.history[0]).toMatchObject({ revision, reference: "draft 101", confirmed: false })
    expect(detail.body.history.at(-1).reference).toBe("draft 2")
  })
  it("every route refuses a missing credential or an API token with 401, and malformed bodies with 400, in the error body", async () => {
    const { id } = await humanLeaderboard(["b-1", "b-2"])
    const caseId = crypto.randomUUID()
    const routes: Array<[string, string, unknown]> = [
      ["GET", `${H(id)}/`, undefined],
      ["GET", `${H(id)}/export`, undefined],
      ["GET", `${H(id)}/documents`, undefined],
      ["POST", `${H(id)}/documents`, { id: crypto.randomUUID(), name: "a.txt", scope: "case", data: "YQ==" }],
      ["DELETE", `${H(id)}/documents/${crypto.randomUUID()}`, undefined],
      ["POST", `${H(id)}/cases`, { id: caseId, input: "q" }],
      ["GET", `${H(id)}/cases/${caseId}`, undefined],
      ["PUT", `${H(id)}/cases/${caseId}/config`, { revision: 1, prompt_override: null }],
      ["POST", `${H(id)}/cases/${caseId}/generate`, {}],
      ["PUT", `${H(id)}/cases/${caseId}/review`, { revision: 1, confirm: false, review: { verdicts: {}, reference: "", notes: "" } }]
    ]
    const apiToken = (await podium.request("POST", "/api/tokens", { token: owner, json: { name: "not here" } })).body.secret
    for (const [method, path, json] of routes) {
      for (const token of [undefined, apiToken]) {
        const reply = await podium.request(method, path, { token, json })
        expect(reply.status, `${method} ${path}`).toBe(401)
        expect(reply.body.error.code).toBe("unauthorized")
        expect(reply.headers.get("www-authenticate")).toBe("Bearer")
      }
    }
    for (const [method, path, json] of routes.filter(([, , json]) => json !== undefined)) {
      const malformed = await podium.request(method, path, { token: owner, body: "{not json", headers: { "content-type": "application/json" } })
      expect(malformed.status, `${method} ${path}`).toBe(400)
      expect(malformed.body.error.code).toBe("validation_failed")
      if (Object.keys(json as object).length === 0) continue // generate's body has no fields to get wrong
      const wrongShape = await podium.request(method, path, { token: owner, json: { ...(json as object), revision: "one", id: "not-a-uuid" } })
      expect(wrongShape.status, `${method} ${path}`).toBe(400)
      expect(wrongShape.body.error.code).toBe("validation_failed")
    }
    const notUuid = await podium.request("GET", `${H(id)}/cases/not-a-uuid`, { token: owner })
    expect(notUuid.status).toBe(400)
    expect(notUuid.body.error.details.issues[0].path).toEqual(["params", "case_id"])
  })
})
