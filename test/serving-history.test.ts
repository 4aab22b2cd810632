import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { CandidateId, LeaderboardId, ServingEntryId } from "@podium/domain/leaderboards"
import type { UpdateLeaderboardRequest } from "@podium/adapters-http/leaderboards/LeaderboardsApi"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { aLeaderboard, aRouterCandidate, aToken, type SignedIn, signedIn } from "./support/Builders.ts"
import { type Caller, client, expectError, expectValidation } from "./support/Client.ts"
import { type Podium, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

let fake: OpenAiFake
let podium: Podium
let owner: SignedIn
let ownerId: string
let token: { readonly id: string; readonly api: Caller; readonly secret: string }

beforeAll(async () => {
  fake = await startOpenAiFake()
  podium = await startPodium({ ROUTER_BASE_URL: `${fake.url}/router/api/v1`, PROVIDER_TIMEOUT_MS: "2000" })
  owner = await signedIn(podium, "serving-history-owner")
  const created = await owner.api((c) =>
    c.tokens.create({ payload: aToken(["leaderboards:read", "leaderboards:write", "leaderboards:inference"]) }))
  token = { id: created.token.id, secret: created.secret, api: client(podium, created.secret) }
  ownerId = created.token.created_by!
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

type Update = typeof UpdateLeaderboardRequest.Type

/** A leaderboard with two Router candidates, serving by ranking (nothing serves yet: no ranking, no choice). */
const twoCandidates = async () => {
  const { id } = (await owner.api((c) => c.leaderboards.create({ payload: aLeaderboard({ name: "serving" }) }))).leaderboard
  const add = async (name: string) =>
    (await owner.api((c) =>
      c.leaderboards.addModel({ params: { leaderboard_id: id }, payload: aRouterCandidate({ name, model_name: `openai/${name}` }) })
    )).model.id
  return { id, a: await add("a"), b: await add("b") }
}
const patch = (leaderboard_id: LeaderboardId, payload: Update, api: Caller = owner.api) =>
  api((c) => c.leaderboards.update({ params: { leaderboard_id }, payload }))
const getLeaderboard = (leaderboard_id: LeaderboardId) =>
  owner.api((c) => c.leaderboards.get({ params: { leaderboard_id } }))
const history = (leaderboard_id: LeaderboardId, query: { readonly limit?: number; readonly cursor?: ServingEntryId } = {}) =>
  owner.api((c) => c.leaderboards.servingHistory({ params: { leaderboard_id }, query }))
const rollback = (leaderboard_id: LeaderboardId, api: Caller = owner.api) =>
  api((c) => c.leaderboards.rollback({ params: { leaderboard_id } }))
/** The candidate that answers a call through the leaderboard. */
const servedBy = async (leaderboard_id: LeaderboardId) => {
  const reply = await podium.request("POST", `/v1/leaderboard/${leaderboard_id}/inference`, {
    token: token.secret,
    json: { input: "hi" }
  })
  expect(reply.status, reply.text).toBe(200)
  return reply.headers.get("x-service-leaderboard-model-id")
}
const manual = (candidate: CandidateId): Update => ({ chosen_model_strategy: "manual", chosen_leaderboard_model_id: candidate })

describe("serving history", () => {
  it("records each manual choice with its actor; other changes leave no entry", async () => {
    const { a, b, id } = await twoCandidates()
    expect((await history(id)).data).toEqual([])
    await patch(id, manual(a))
    await patch(id, { name: "renamed", description: "no serving change" })
    await patch(id, { chosen_leaderboard_model_id: b }, token.api)
    const { data, next_cursor } = await history(id)
    expect(next_cursor).toBeNull()
    expect(data).toHaveLength(2)
    expect(data[0]).toMatchObject({
      leaderboard_id: id,
      kind: "manual",
      from_candidate_id: a,
      to_candidate_id: b,
      actor: { type: "api_token", id: token.id },
      evidence: { chosen_leaderboard_model_id: { from: a, to: b } },
      reason: null
    })
    expect(data[1]).toMatchObject({
      kind: "manual",
      // two candidates, no ranking and no choice: nothing served before
      from_candidate_id: null,
      to_candidate_id: a,
      actor: { type: "user", id: ownerId },
      evidence: { chosen_model_strategy: { from: "ranking_winner", to: "manual" } }
    })
    // the rows are in the database as the API shows them
    const rows = await query(podium.databaseUrl, (sql) =>
      sql`SELECT kind, actor FROM leaderboard_serving_history WHERE leaderboard_id = ${id} ORDER BY at, id`)
    expect(rows).toEqual([
      { kind: "manual", actor: { type: "user", id: ownerId } },
      { kind: "manual", actor: { type: "api_token", id: token.id } }
    ])
  })

  it("pages newest first through next_cursor; limit is 1 to 100", async () => {
    const { a, b, id } = await twoCandidates()
    for (const candidate of [a, b, a]) await patch(id, manual(candidate))
    const all = (await history(id)).data.map((e) => e.id)
    expect(all).toHaveLength(3)
    const first = await history(id, { limit: 2 })
    expect(first.data.map((e) => e.id)).toEqual(all.slice(0, 2))
    expect(first.next_cursor).toBe(all[1])
    const second = await history(id, { limit: 2, cursor: first.next_cursor! })
    expect(second.data.map((e) => e.id)).toEqual(all.slice(2))
    expect(second.next_cursor).toBeNull()
    for (const limit of ["0", "101", "x"]) {
      const reply = await podium.request("GET", `/api/leaderboards/${id}/serving-history?limit=${limit}`, { token: owner.session })
      expect(reply.status, limit).toBe(400)
      expect(reply.body.error.code).toBe("validation_failed")
    }
    const badCursor = await podium.request("GET", `/api/leaderboards/${id}/serving-history?cursor=nope`, { token: owner.session })
    expect(badCursor.status).toBe(400)
  })

  it("rollback under manual: the previous candidate serves again, recorded; a second rollback undoes it", async () => {
    const { a, b, id } = await twoCandidates()
    await patch(id, manual(a))
    await patch(id, manual(b))
    expect(await servedBy(id)).toBe(b)
    const done = await rollback(id, token.api)
    expect(done.serving_candidate_id).toBe(a)
    expect(done.leaderboard).toMatchObject({ chosen_model_strategy: "manual", chosen_leaderboard_model_id: a })
    expect(done.entry).toMatchObject({
      kind: "rollback",
      from_candidate_id: b,
      to_candidate_id: a,
      actor: { type: "api_token", id: token.id }
    })
    expect((await getLeaderboard(id)).leaderboard.chosen_leaderboard_model_id).toBe(a)
    expect(await servedBy(id)).toBe(a)
    const { data } = await history(id)
    expect(data.map((e) => e.kind)).toEqual(["rollback", "manual", "manual"])
    expect(data[0]!.id).toBe(done.entry.id)
    // the newest change is now the rollback itself: undoing it serves b again
    expect((await rollback(id)).serving_candidate_id).toBe(b)
    expect(await servedBy(id)).toBe(b)
  })

  it("rollback under ranking_winner serves the previous candidate as the ranking's winner", async () => {
    const { a, b, id } = await twoCandidates()
    await patch(id, manual(a))
    await patch(id, manual(b))
    // back to the ranking, which (no ranking yet) serves the chosen b: nothing changes what serves
    await patch(id, { chosen_model_strategy: "ranking_winner" })
    expect(await servedBy(id)).toBe(b)
    const done = await rollback(id)
    expect(done.serving_candidate_id).toBe(a)
    expect(done.leaderboard).toMatchObject({ chosen_model_strategy: "ranking_winner", chosen_leaderboard_model_id: b })
    expect(await servedBy(id)).toBe(a)
    const [winner] = await query(podium.databaseUrl, (sql) =>
      sql`SELECT ranking_winner_id::text AS id FROM leaderboards WHERE id = ${id}`)
    expect(winner).toEqual({ id: a })
  })

  it("rollback with nothing to go back to is 409 no_previous_serving", async () => {
    const { a, b, id } = await twoCandidates()
    await expectError(rollback(id), 409, "no_previous_serving", "no history")
    // the only change started from nothing served
    await patch(id, manual(a))
    await expectError(rollback(id), 409, "no_previous_serving", "from nothing")
    // the candidate to go back to was removed
    await patch(id, manual(b))
    await owner.api((c) => c.leaderboards.removeModel({ params: { leaderboard_id: id, leaderboard_model_id: a } }))
    await expectError(rollback(id), 409, "no_previous_serving", "removed")
    expect((await history(id)).data).toHaveLength(2)
    // another workspace's leaderboard does not exist for the caller
    const stranger = await signedIn(podium, "serving-history-stranger")
    await expectError(rollback(id, stranger.api), 404, "not_found", "stranger")
  })
})

describe("serving policy", () => {
  it("GET shows the defaults; PATCH changes the fields given, 400 out of range", async () => {
    const { id } = await twoCandidates()
    const defaults = { alpha: 0.05, min_rows: 30, switch_when: "significantly_better", margin: 0.02 }
    expect((await getLeaderboard(id)).leaderboard.serving_policy).toEqual(defaults)
    await expectValidation(patch(id, { serving_policy: { alpha: 0 } }), ["payload", "serving_policy", "alpha"], "alpha 0")
    await expectValidation(patch(id, { serving_policy: { margin: 1 } }), ["payload", "serving_policy", "margin"], "margin 1")
    await expectValidation(patch(id, { serving_policy: { min_rows: 0 } }), ["payload", "serving_policy", "min_rows"], "min_rows 0")
    expect((await getLeaderboard(id)).leaderboard.serving_policy).toEqual(defaults)
    const updated = await patch(id, { serving_policy: { alpha: 0.01, switch_when: "non_inferior_and_cheaper" } })
    const expected = { ...defaults, alpha: 0.01, switch_when: "non_inferior_and_cheaper" }
    expect(updated.leaderboard.serving_policy).toEqual(expected)
    await patch(id, { serving_policy: { margin: 0 } })
    expect((await getLeaderboard(id)).leaderboard.serving_policy).toEqual({ ...expected, margin: 0 })
    const [stored] = await query(podium.databaseUrl, (sql) => sql`SELECT serving_policy FROM leaderboards WHERE id = ${id}`)
    expect(stored).toEqual({ serving_policy: { ...expected, margin: 0 } })
  })
})
