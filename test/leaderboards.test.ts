import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Podium, type Reply, session, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

let podium: Podium
let owner: string
let workspace: string

beforeAll(async () => {
  podium = await startPodium()
  owner = await session("lb-owner")
  workspace = await workspaceOf(owner)
})
afterAll(() => podium.stop())

const isoMillis = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const uuidV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const datasetUrl = "https://data.example.com/rows.jsonl"

type Json = Record<string, unknown>

/** The personal workspace of a session (its first request creates it). */
const workspaceOf = async (token: string): Promise<string> =>
  (await podium.request("GET", "/api/tokens", { token })).body.business_id

/** An API token of the owner's workspace with exactly these scopes. */
const apiToken = async (scopes: ReadonlyArray<string>, token = owner): Promise<string> => {
  const reply = await podium.request("POST", "/api/tokens", { token, json: { name: scopes.join(" "), scopes } })
  expect(reply.status).toBe(201)
  return reply.body.secret
}

const lb = (id: string) => `/api/leaderboards/${id}`
const models = (id: string) => `/api/leaderboards/${id}/models`

const createLeaderboard = (json: Json = {}, token = owner) =>
  podium.request("POST", "/api/leaderboards", { token, json: { name: "Support answers", dataset_url: datasetUrl, ...json } })
const list = (queryString = "", token = owner) => podium.request("GET", `/api/leaderboards${queryString}`, { token })
const getLeaderboard = (id: string, token = owner) => podium.request("GET", lb(id), { token })
const patchLeaderboard = (id: string, json: Json, token = owner) => podium.request("PATCH", lb(id), { token, json })
const addCandidate = (leaderboardId: string, json: Json, token = owner) =>
  podium.request("POST", models(leaderboardId), { token, json })
const removeCandidate = (leaderboardId: string, candidateId: string, token = owner) =>
  podium.request("DELETE", `${models(leaderboardId)}/${candidateId}`, { token })

/** Creates a leaderboard and returns its `leaderboard` object. */
const newLeaderboard = async (json: Json = {}, token = owner) => {
  const reply = await createLeaderboard(json, token)
  expect(reply.status, reply.text).toBe(201)
  return reply.body.leaderboard
}

/** Adds a Router candidate (or as `json` says) and returns its `model` object. */
const newCandidate = async (leaderboardId: string, json: Json = {}, token = owner) => {
  const reply = await addCandidate(leaderboardId, { name: "gpt mini", model_name: "openai/gpt-4o-mini", ...json }, token)
  expect(reply.status, reply.text).toBe(201)
  return reply.body.model
}

const ids = (items: ReadonlyArray<{ id: string }>) => items.map((item) => item.id)

const expectValidation = (reply: Reply, path: ReadonlyArray<string>, label = "") => {
  expect(reply.status, `${label} ${reply.text}`).toBe(400)
  expect(reply.body.error.code, label).toBe("validation_failed")
  expect(reply.body.error.details.issues[0].path, label).toEqual(path)
}

const expectError = (reply: Reply, status: number, code: string, label = "") => {
  expect(reply.status, `${label} ${reply.text}`).toBe(status)
  expect(reply.body.error.code, label).toBe(code)
  expect(typeof reply.body.error.message, label).toBe("string")
}

describe("creating leaderboards", () => {
  it("returns the leaderboard and its challenge, with defaults", async () => {
    const reply = await createLeaderboard({ name: "Support answers" })
    expect(reply.status, reply.text).toBe(201)
    const { leaderboard, challenge } = reply.body
    expect(leaderboard).toEqual({
      id: expect.stringMatching(uuidV7),
      business_id: workspace,
      name: "Support answers",
      description: "",
      status: "active",
      dataset_type: "GET",
      dataset_url: datasetUrl,
      eval_type: "exact",
      chosen_model_strategy: "ranking_winner",
      chosen_leaderboard_model_id: null,
      schedule: {},
      created_at: expect.stringMatching(isoMillis),
      updated_at: expect.stringMatching(isoMillis)
    })
    expect(challenge).toEqual({
      system_prompt: null,
      model_prompt: null,
      eval_type: "exact",
      judge_provider: null,
      judge_model: null,
      dataset_type: "GET",
      dataset_url: datasetUrl,
      auto_limit_size: false,
      max_samples_to_gather: null,
      daily_event_limit: null,
      monthly_event_limit: null,
      consolidate_every_events: null,
      consolidate_every_hours: null,
      dedupe: false,
      end_date: null
    })
    expect(Math.abs(Date.parse(leaderboard.created_at) - Date.now())).toBeLessThan(60_000)
  })

  it("keeps every challenge field as given", async () => {
    const given = {
      system_prompt: "You answer support questions.",
      model_prompt: "Question: {{input}}",
      dataset_type: "PUSH",
      eval_type: "judge",
      judge_provider: "openrouter",
      judge_model: "openai/gpt-4o",
      auto_limit_size: true,
      max_samples_to_gather: 500,
      daily_event_limit: 1000,
      monthly_event_limit: 20000,
      consolidate_every_events: 50,
      consolidate_every_hours: 6,
      dedupe: true,
      end_date: "2027-01-31T00:00:00.000Z"
    }
    const reply = await podium.request("POST", "/api/leaderboards", {
      token: owner,
      json: { name: "Judged", description: "LLM-as-judge", ...given }
    })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body.challenge).toEqual({ ...given, dataset_url: null })
    expect(reply.body.leaderboard).toMatchObject({
      description: "LLM-as-judge",
      dataset_type: "PUSH",
      dataset_url: null,
      eval_type: "judge"
    })
    const fetched = await getLeaderboard(reply.body.leaderboard.id)
    expect(fetched.body.challenge).toEqual(reply.body.challenge)
    expect(fetched.body.leaderboard).toEqual(reply.body.leaderboard)
  })

  it("a GET dataset's dataset_url is http(s) when given, and may come later; a PUSH dataset needs none", async () => {
    const missing = await podium.request("POST", "/api/leaderboards", { token: owner, json: { name: "no url" } })
    expect(missing.status, missing.text).toBe(201)
    expect(missing.body.challenge).toMatchObject({ dataset_type: "GET", dataset_url: null })
    expectValidation(await createLeaderboard({ dataset_url: "ftp://data.example.com/rows" }), ["dataset_url"], "ftp")
    expectValidation(await createLeaderboard({ dataset_url: "rows.jsonl" }), ["dataset_url"], "relative")
    const push = await podium.request("POST", "/api/leaderboards", {
      token: owner,
      json: { name: "pushed", dataset_type: "PUSH" }
    })
    expect(push.status, push.text).toBe(201)
    expect(push.body.challenge.dataset_url).toBeNull()
  })

  it("rejects wrong enums, types and ranges with the payload path", async () => {
    const cases: Array<[Json, ReadonlyArray<string>]> = [
      [{ eval_type: "fuzzy" }, ["payload", "eval_type"]],
      [{ dataset_type: "POST" }, ["payload", "dataset_type"]],
      [{ daily_event_limit: -1 }, ["payload", "daily_event_limit"]],
      [{ max_samples_to_gather: 1.5 }, ["payload", "max_samples_to_gather"]],
      [{ auto_limit_size: "yes" }, ["payload", "auto_limit_size"]],
      [{ end_date: "tomorrow" }, ["payload", "end_date"]],
      [{ name: "   " }, ["payload", "name"]],
      [{ name: 42 }, ["payload", "name"]]
    ]
    for (const [json, path] of cases) {
      expectValidation(await createLeaderboard(json), path, JSON.stringify(json))
    }
    const nameless = await podium.request("POST", "/api/leaderboards", { token: owner, json: { dataset_url: datasetUrl } })
    expectValidation(nameless, ["payload", "name"], "no name")
  })
})

describe("listing leaderboards", () => {
  it("lists newest first and pages with limit, offset and next_offset", async () => {
    const pager = await session("lb-pager")
    const first = await newLeaderboard({ name: "first" }, pager)
    const second = await newLeaderboard({ name: "second" }, pager)
    const third = await newLeaderboard({ name: "third" }, pager)

    const all = await list("", pager)
    expect(all.status, all.text).toBe(200)
    expect(ids(all.body.leaderboards)).toEqual([third.id, second.id, first.id])
    expect(all.body.next_offset).toBeNull()
    expect(all.body.leaderboards[0]).toEqual(third)

    const page1 = await list("?limit=2", pager)
    expect(page1.status, page1.text).toBe(200)
    expect(ids(page1.body.leaderboards)).toEqual([third.id, second.id])
    expect(page1.body.next_offset).toBe(2)

    const page2 = await list("?limit=2&offset=2", pager)
    expect(page2.status, page2.text).toBe(200)
    expect(ids(page2.body.leaderboards)).toEqual([first.id])
    expect(page2.body.next_offset).toBeNull()

    const past = await list("?offset=10", pager)
    expect(past.status, past.text).toBe(200)
    expect(past.body).toEqual({ leaderboards: [], next_offset: null })
  })

  it("rejects out-of-range limit and offset instead of clamping", async () => {
    for (const qs of ["?limit=0", "?limit=1001", "?offset=-1", "?limit=abc", "?limit=1.5", "?offset=x"]) {
      const reply = await list(qs)
      expect(reply.status, `${qs} ${reply.text}`).toBe(400)
      expect(reply.body.error.code, qs).toBe("validation_failed")
    }
    expect((await list("?limit=1000")).status).toBe(200)
    expect((await list("?limit=1")).status).toBe(200)
  })
})

describe("getting a leaderboard", () => {
  it("returns the leaderboard, its challenge, candidates and runs", async () => {
    const created = await createLeaderboard({ name: "detail", system_prompt: "Be brief." })
    const reply = await getLeaderboard(created.body.leaderboard.id)
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body).toEqual({
      leaderboard: created.body.leaderboard,
      challenge: created.body.challenge,
      models: [],
      runs: []
    })
  })

  it("an unknown id is 404 and a malformed id is 400", async () => {
    expectError(await getLeaderboard(randomUUID()), 404, "not_found")
    const malformed = await getLeaderboard("not-a-uuid")
    expect(malformed.status, malformed.text).toBe(400)
    expect(malformed.body.error.code).toBe("validation_failed")
  })
})

describe("updating leaderboards", () => {
  it("changes only what is sent", async () => {
    const created = await createLeaderboard({ description: "before", system_prompt: "Be brief.", dedupe: true })
    const { id } = created.body.leaderboard
    const reply = await patchLeaderboard(id, { name: "renamed" })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.leaderboard).toEqual({
      ...created.body.leaderboard,
      name: "renamed",
      updated_at: expect.stringMatching(isoMillis)
    })
    expect(reply.body.challenge).toEqual(created.body.challenge)
    expect(Date.parse(reply.body.leaderboard.updated_at)).toBeGreaterThanOrEqual(
      Date.parse(created.body.leaderboard.updated_at)
    )
    const fetched = await getLeaderboard(id)
    expect(fetched.body.leaderboard).toEqual(reply.body.leaderboard)
    expect(fetched.body.challenge).toEqual(created.body.challenge)
  })

  it("challenge fields change the challenge", async () => {
    const { id } = await newLeaderboard()
    const reply = await patchLeaderboard(id, {
      system_prompt: "New prompt",
      dataset_url: "https://data.example.com/v2.jsonl",
      eval_type: "human",
      daily_event_limit: 10
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.challenge).toMatchObject({
      system_prompt: "New prompt",
      dataset_url: "https://data.example.com/v2.jsonl",
      eval_type: "human",
      daily_event_limit: 10,
      model_prompt: null,
      dataset_type: "GET"
    })
    expect(reply.body.leaderboard).toMatchObject({ dataset_url: "https://data.example.com/v2.jsonl", eval_type: "human" })
    const fetched = await getLeaderboard(id)
    expect(fetched.body.challenge).toEqual(reply.body.challenge)

    expectValidation(await patchLeaderboard(id, { dataset_url: "not a url" }), ["dataset_url"], "bad url")
    expectValidation(await patchLeaderboard(id, { eval_type: "fuzzy" }), ["payload", "eval_type"], "bad enum")
    expectValidation(await patchLeaderboard(id, { daily_event_limit: -5 }), ["payload", "daily_event_limit"], "negative")
    expectValidation(await patchLeaderboard(id, { name: "  " }), ["payload", "name"], "blank name")
    const switched = await patchLeaderboard(id, { dataset_type: "PUSH" })
    expect(switched.status, switched.text).toBe(200)
    expect(switched.body.challenge.dataset_type).toBe("PUSH")
  })

  it("keeps unknown properties and returns them on the leaderboard", async () => {
    const { id } = await newLeaderboard({ name: "open object" })
    const first = await patchLeaderboard(id, { team_label: "growth", nested: { a: 1 } })
    expect(first.status, first.text).toBe(200)
    expect(first.body.leaderboard).toMatchObject({ id, name: "open object", team_label: "growth", nested: { a: 1 } })

    const fetched = await getLeaderboard(id)
    expect(fetched.body.leaderboard).toMatchObject({ team_label: "growth", nested: { a: 1 } })
    const listed = (await list()).body.leaderboards.find((l: { id: string }) => l.id === id)
    expect(listed).toMatchObject({ team_label: "growth", nested: { a: 1 } })

    const second = await patchLeaderboard(id, { priority: 3, schedule: { cron: "0 * * * *" } })
    expect(second.status, second.text).toBe(200)
    expect(second.body.leaderboard).toMatchObject({
      team_label: "growth",
      nested: { a: 1 },
      priority: 3,
      schedule: { cron: "0 * * * *" }
    })
    const again = await getLeaderboard(id)
    expect(again.body.leaderboard).toEqual(second.body.leaderboard)
  })

  it("unknown properties cannot overwrite server-owned fields", async () => {
    const created = await newLeaderboard({ name: "owned fields" })
    const reply = await patchLeaderboard(created.id, {
      id: randomUUID(),
      business_id: randomUUID(),
      created_at: "2000-01-01T00:00:00.000Z",
      deleted_at: "2000-01-01T00:00:00.000Z"
    })
    // Rejecting them is fine too; what must not happen is that they take effect.
    expect([200, 400], reply.text).toContain(reply.status)
    const fetched = await getLeaderboard(created.id)
    expect(fetched.status, fetched.text).toBe(200)
    expect(fetched.body.leaderboard).toMatchObject({
      id: created.id,
      business_id: workspace,
      created_at: created.created_at
    })
    expect(ids((await list()).body.leaderboards)).toContain(created.id)
  })

  it("status: running is the service's, paused is allowed, archived is read-only until reactivated", async () => {
    const { id } = await newLeaderboard({ name: "lifecycle" })
    const candidate = await newCandidate(id)
    expectValidation(await patchLeaderboard(id, { status: "running" }), ["status"], "running")
    expectValidation(await patchLeaderboard(id, { status: "deleted" }), ["payload", "status"], "unknown status")

    const paused = await patchLeaderboard(id, { status: "paused" })
    expect(paused.status, paused.text).toBe(200)
    expect(paused.body.leaderboard.status).toBe("paused")

    const archived = await patchLeaderboard(id, { status: "archived" })
    expect(archived.status, archived.text).toBe(200)
    expect(archived.body.leaderboard.status).toBe("archived")
    expect((await getLeaderboard(id)).body.leaderboard.status).toBe("archived")

    expectError(await patchLeaderboard(id, { name: "changed" }), 409, "leaderboard_archived", "rename")
    expectError(await patchLeaderboard(id, { status: "archived", name: "changed" }), 409, "leaderboard_archived", "both")
    expectError(await patchLeaderboard(id, { team_label: "x" }), 409, "leaderboard_archived", "extra")
    expectError(await addCandidate(id, { name: "late", model_name: "x/y" }), 409, "leaderboard_archived", "add")
    expectError(await removeCandidate(id, candidate.id), 409, "leaderboard_archived", "remove candidate")
    expect((await getLeaderboard(id)).body.leaderboard.name).toBe("lifecycle")
    expect(ids((await podium.request("GET", models(id), { token: owner })).body.models)).toEqual([candidate.id])

    const reactivated = await patchLeaderboard(id, { status: "active" })
    expect(reactivated.status, reactivated.text).toBe(200)
    expect(reactivated.body.leaderboard.status).toBe("active")
    const renamed = await patchLeaderboard(id, { name: "changed" })
    expect(renamed.status, renamed.text).toBe(200)
    expect(renamed.body.leaderboard.name).toBe("changed")
  })

  it("manual choice needs a chosen candidate of this leaderboard", async () => {
    const { id } = await newLeaderboard({ name: "choice" })
    const other = await newLeaderboard({ name: "other" })
    const foreign = await newCandidate(other.id)
    const candidate = await newCandidate(id)

    expectValidation(await patchLeaderboard(id, { chosen_model_strategy: "manual" }), ["chosen_leaderboard_model_id"], "none")
    expectValidation(
      await patchLeaderboard(id, { chosen_model_strategy: "manual", chosen_leaderboard_model_id: randomUUID() }),
      ["chosen_leaderboard_model_id"],
      "unknown id"
    )
    expectValidation(
      await patchLeaderboard(id, { chosen_model_strategy: "manual", chosen_leaderboard_model_id: foreign.id }),
      ["chosen_leaderboard_model_id"],
      "another leaderboard's candidate"
    )
    expectValidation(
      await patchLeaderboard(id, { chosen_model_strategy: "automatic" }),
      ["payload", "chosen_model_strategy"],
      "unknown strategy"
    )
    expect((await getLeaderboard(id)).body.leaderboard).toMatchObject({
      chosen_model_strategy: "ranking_winner",
      chosen_leaderboard_model_id: null
    })

    const chosen = await patchLeaderboard(id, { chosen_model_strategy: "manual", chosen_leaderboard_model_id: candidate.id })
    expect(chosen.status, chosen.text).toBe(200)
    expect(chosen.body.leaderboard).toMatchObject({
      chosen_model_strategy: "manual",
      chosen_leaderboard_model_id: candidate.id
    })
    expect((await getLeaderboard(id)).body.leaderboard).toMatchObject({
      chosen_model_strategy: "manual",
      chosen_leaderboard_model_id: candidate.id
    })
    expectValidation(await patchLeaderboard(id, { chosen_leaderboard_model_id: null }), ["chosen_leaderboard_model_id"], "unset")

    const back = await patchLeaderboard(id, { chosen_model_strategy: "ranking_winner", chosen_leaderboard_model_id: null })
    expect(back.status, back.text).toBe(200)
    expect(back.body.leaderboard).toMatchObject({ chosen_model_strategy: "ranking_winner", chosen_leaderboard_model_id: null })
  })
})

describe("deleting leaderboards", () => {
  it("returns {id, deleted: true}, then the leaderboard is 404 everywhere", async () => {
    const { id } = await newLeaderboard({ name: "doomed" })
    const candidate = await newCandidate(id)
    const deleted = await podium.request("DELETE", lb(id), { token: owner })
    expect(deleted.status, deleted.text).toBe(200)
    expect(deleted.body).toEqual({ id, deleted: true })

    expectError(await getLeaderboard(id), 404, "not_found", "get")
    expectError(await patchLeaderboard(id, { name: "zombie" }), 404, "not_found", "patch")
    expectError(await podium.request("DELETE", lb(id), { token: owner }), 404, "not_found", "delete again")
    expectError(await podium.request("GET", models(id), { token: owner }), 404, "not_found", "list models")
    expectError(await addCandidate(id, { name: "late", model_name: "x/y" }), 404, "not_found", "add model")
    expectError(await removeCandidate(id, candidate.id), 404, "not_found", "remove model")
    expect(ids((await list()).body.leaderboards)).not.toContain(id)

    const rows = await query(podium.databaseUrl, (sql) => sql`SELECT deleted_at FROM leaderboards WHERE id = ${id}`)
    expect(rows).toHaveLength(1) // a soft delete
    expect(rows[0]!["deleted_at"]).not.toBeNull()
  })
})

describe("candidate models", () => {
  it("adds a candidate of each platform", async () => {
    const { id } = await newLeaderboard({ name: "platforms" })
    const serviceModel = randomUUID()

    const router = await addCandidate(id, {
      name: "gpt mini",
      model_name: "openai/gpt-4o-mini",
      input_price_per_m_tokens: 0.15,
      output_price_per_m_tokens: 0.6
    })
    expect(router.status, router.text).toBe(201)
    expect(router.body.model).toEqual({
      id: expect.stringMatching(uuidV7),
      leaderboard_id: id,
      name: "gpt mini",
      platform: "Router",
      model_name: "openai/gpt-4o-mini",
      model_url: null,
      url: null,
      model_id: null,
      auth_type: "bearer",
      auth_header_name: null,
      has_token: false,
      input_price_per_m_tokens: 0.15,
      output_price_per_m_tokens: 0.6,
      created_at: expect.stringMatching(isoMillis)
    })

    const hub = await addCandidate(id, {
      name: "llama",
      platform: "Hub",
      model_name: "meta-llama/Llama-3.1-8B-Instruct",
      model_url: "https://hub.example.com/meta-llama/Llama-3.1-8B-Instruct"
    })
    expect(hub.status, hub.text).toBe(201)
    expect(hub.body.model).toMatchObject({
      platform: "Hub",
      model_name: "meta-llama/Llama-3.1-8B-Instruct",
      model_url: "https://hub.example.com/meta-llama/Llama-3.1-8B-Instruct",
      input_price_per_m_tokens: null,
      output_price_per_m_tokens: null
    })

    const custom = await addCandidate(id, {
      name: "in-house",
      platform: "Custom",
      url: "https://llm.example.com/v1",
      model_name: "house-7b",
      auth_type: "header",
      auth_header_name: "X-Api-Key",
      input_price_per_m_tokens: 0,
      output_price_per_m_tokens: 1.25
    })
    expect(custom.status, custom.text).toBe(201)
    expect(custom.body.model).toMatchObject({
      platform: "Custom",
      url: "https://llm.example.com/v1",
      model_name: "house-7b",
      auth_type: "header",
      auth_header_name: "X-Api-Key",
      has_token: false,
      input_price_per_m_tokens: 0,
      output_price_per_m_tokens: 1.25
    })

    const service = await addCandidate(id, { name: "our model", platform: "Service", model_id: serviceModel })
    expect(service.status, service.text).toBe(201)
    expect(service.body.model).toMatchObject({ platform: "Service", model_id: serviceModel, model_name: null, url: null })

    const listed = await podium.request("GET", models(id), { token: owner })
    expect(listed.status, listed.text).toBe(200)
    expect(listed.body.models).toEqual([router.body.model, hub.body.model, custom.body.model, service.body.model])
    expect((await getLeaderboard(id)).body.models).toEqual(listed.body.models)
  })

  it("rejects a candidate missing what its platform needs", async () => {
    const { id } = await newLeaderboard({ name: "requirements" })
    const cases: Array<[Json, ReadonlyArray<string>]> = [
      [{ name: "router" }, ["model_name"]],
      [{ name: "router", platform: "Router" }, ["model_name"]],
      [{ name: "hub", platform: "Hub" }, ["model_name"]],
      [{ name: "custom", platform: "Custom" }, ["url"]],
      [{ name: "custom", platform: "Custom", url: "ftp://llm.example.com" }, ["url"]],
      [{ name: "custom", platform: "Custom", url: "https://llm.example.com/v1", auth_type: "header" }, ["auth_header_name"]],
      [{ name: "service", platform: "Service" }, ["model_id"]],
      [{ name: "service", platform: "Service", model_id: "not-a-uuid" }, ["payload", "model_id"]],
      [{ name: "x", platform: "OpenAI", model_name: "x" }, ["payload", "platform"]],
      [{ name: "x", model_name: "x", auth_type: "basic" }, ["payload", "auth_type"]],
      [{ name: "x", model_name: "x", input_price_per_m_tokens: -1 }, ["payload", "input_price_per_m_tokens"]],
      [{ name: "  ", model_name: "x" }, ["payload", "name"]],
      [{ model_name: "x" }, ["payload", "name"]]
    ]
    for (const [json, path] of cases) {
      expectValidation(await addCandidate(id, json), path, JSON.stringify(json))
    }
    expect((await podium.request("GET", models(id), { token: owner })).body.models).toEqual([])
  })

  it("stores the candidate's token encrypted and never returns it", async () => {
    const { id } = await newLeaderboard({ name: "secrets" })
    const secret = `sk-candidate-${randomUUID()}`
    const reply = await addCandidate(id, {
      name: "private endpoint",
      platform: "Custom",
      url: "https://llm.example.com/v1",
      token: secret
    })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body.model).toMatchObject({ has_token: true, auth_type: "bearer" })
    expect(reply.body.model).not.toHaveProperty("token")
    expect(reply.text).not.toContain(secret)

    const listed = await podium.request("GET", models(id), { token: owner })
    expect(listed.body.models[0]).toMatchObject({ id: reply.body.model.id, has_token: true })
    expect(listed.text).not.toContain(secret)
    expect((await getLeaderboard(id)).text).not.toContain(secret)

    const rows = await query(podium.databaseUrl, (sql) => sql`SELECT * FROM leaderboard_models`)
    expect(rows.length).toBeGreaterThan(0)
    const stored = JSON.stringify(rows)
    expect(stored).not.toContain(secret)
    expect(stored).not.toContain(secret.slice("sk-candidate-".length))
    const own = rows.find((row) => row["id"] === reply.body.model.id)
    expect(own?.["sealed_token"]).toEqual(expect.any(String))
  })

  it("removing a candidate returns {id, deleted: true}, then 404", async () => {
    const { id } = await newLeaderboard({ name: "removals" })
    const first = await newCandidate(id, { name: "first" })
    const second = await newCandidate(id, { name: "second" })
    const other = await newLeaderboard({ name: "neighbour" })
    const neighbour = await newCandidate(other.id)

    const removed = await removeCandidate(id, first.id)
    expect(removed.status, removed.text).toBe(200)
    expect(removed.body).toEqual({ id: first.id, deleted: true })
    expectError(await removeCandidate(id, first.id), 404, "not_found", "again")
    expectError(await removeCandidate(id, randomUUID()), 404, "not_found", "unknown")
    expectError(await removeCandidate(id, neighbour.id), 404, "not_found", "another leaderboard's")
    expect(ids((await podium.request("GET", models(id), { token: owner })).body.models)).toEqual([second.id])
    expect(ids((await podium.request("GET", models(other.id), { token: owner })).body.models)).toEqual([neighbour.id])
  })

  it("removing the chosen candidate clears the choice and falls back to the ranking winner", async () => {
    const { id } = await newLeaderboard({ name: "chosen removal" })
    const chosen = await newCandidate(id, { name: "chosen" })
    await newCandidate(id, { name: "spare" })
    const manual = await patchLeaderboard(id, { chosen_model_strategy: "manual", chosen_leaderboard_model_id: chosen.id })
    expect(manual.status, manual.text).toBe(200)

    expect((await removeCandidate(id, chosen.id)).status).toBe(200)
    const after = await getLeaderboard(id)
    expect(after.body.leaderboard.chosen_leaderboard_model_id).toBeNull()
    expect(after.body.leaderboard.chosen_model_strategy).toBe("ranking_winner")
    // The leaderboard stays editable (a manual strategy without a choice would fail every PATCH).
    const renamed = await patchLeaderboard(id, { name: "still editable" })
    expect(renamed.status, renamed.text).toBe(200)
  })
})

describe("access", () => {
  it("another workspace sees nothing", async () => {
    const { id } = await newLeaderboard({ name: "private" })
    const candidate = await newCandidate(id)
    const stranger = await session("lb-stranger")
    const attempts: Array<[string, string, Json | undefined]> = [
      ["GET", lb(id), undefined],
      ["PATCH", lb(id), { name: "mine now" }],
      ["DELETE", lb(id), undefined],
      ["GET", models(id), undefined],
      ["POST", models(id), { name: "intruder", model_name: "x/y" }],
      ["DELETE", `${models(id)}/${candidate.id}`, undefined]
    ]
    for (const [method, path, json] of attempts) {
      expectError(await podium.request(method, path, { token: stranger, json }), 404, "not_found", `${method} ${path}`)
    }
    expect(ids((await list("", stranger)).body.leaderboards)).not.toContain(id)
    expectError(await list(`?business_id=${workspace}`, stranger), 403, "forbidden", "list theirs")
    expectError(await createLeaderboard({ business_id: workspace }, stranger), 403, "forbidden", "create in theirs")

    const still = await getLeaderboard(id)
    expect(still.body.leaderboard.name).toBe("private")
    expect(ids(still.body.models)).toEqual([candidate.id])
  })

  it("API tokens need leaderboards:read to read and leaderboards:write to write", async () => {
    const { id } = await newLeaderboard({ name: "scoped" })
    const candidate = await newCandidate(id)
    const reader = await apiToken(["leaderboards:read"])
    const writer = await apiToken(["leaderboards:write"])

    expect((await list("", reader)).status).toBe(200)
    expect(ids((await list("", reader)).body.leaderboards)).toContain(id)
    const got = await getLeaderboard(id, reader)
    expect(got.status, got.text).toBe(200)
    expect(ids(got.body.models)).toEqual([candidate.id])
    expect((await podium.request("GET", models(id), { token: reader })).status).toBe(200)

    const writes: Array<[string, string, Json | undefined]> = [
      ["POST", "/api/leaderboards", { name: "nope", dataset_type: "PUSH" }],
      ["PATCH", lb(id), { name: "nope" }],
      ["DELETE", lb(id), undefined],
      ["POST", models(id), { name: "nope", model_name: "x/y" }],
      ["DELETE", `${models(id)}/${candidate.id}`, undefined]
    ]
    for (const [method, path, json] of writes) {
      const reply = await podium.request(method, path, { token: reader, json })
      expectError(reply, 403, "insufficient_scope", `${method} ${path}`)
      expect(reply.body.error.details.required_scope).toBe("leaderboards:write")
    }

    for (const path of ["/api/leaderboards", lb(id), models(id)]) {
      const reply = await podium.request("GET", path, { token: writer })
      expectError(reply, 403, "insufficient_scope", `GET ${path}`)
      expect(reply.body.error.details.required_scope).toBe("leaderboards:read")
    }
    const made = await createLeaderboard({ name: "by token" }, writer)
    expect(made.status, made.text).toBe(201)
    expect(made.body.leaderboard.business_id).toBe(workspace)
    expect((await patchLeaderboard(id, { description: "by token" }, writer)).status).toBe(200)
    expect((await getLeaderboard(id)).body.leaderboard.name).toBe("scoped")
  })

  it("an API token of another workspace gets 404", async () => {
    const { id } = await newLeaderboard({ name: "not theirs" })
    const stranger = await session("lb-token-stranger")
    const theirs = await apiToken(["leaderboards:read", "leaderboards:write"], stranger)
    expectError(await getLeaderboard(id, theirs), 404, "not_found", "get")
    expectError(await patchLeaderboard(id, { name: "x" }, theirs), 404, "not_found", "patch")
    expectError(await list(`?business_id=${workspace}`, theirs), 403, "forbidden", "list")
  })

  it("no credential is 401 with WWW-Authenticate: Bearer", async () => {
    const { id } = await newLeaderboard({ name: "anonymous" })
    for (const [method, path] of [["GET", "/api/leaderboards"], ["POST", "/api/leaderboards"], ["GET", lb(id)], ["PATCH", lb(id)], ["DELETE", lb(id)], ["GET", models(id)]] as const) {
      const reply = await podium.request(method, path, { json: method === "GET" || method === "DELETE" ? undefined : { name: "x" } })
      expectError(reply, 401, "unauthorized", `${method} ${path}`)
      expect(reply.headers.get("www-authenticate")).toBe("Bearer")
    }
    expect((await getLeaderboard(id)).status).toBe(200)
  })

  it("a member of a team workspace sees its leaderboards through business_id", async () => {
    const boss = await session("lb-boss")
    const team = await workspaceOf(boss)
    const invited = await podium.request("POST", "/api/invite-user", { token: boss, json: { email: "lb-member@example.com" } })
    expect(invited.status, invited.text).toBe(200)
    const { id } = await newLeaderboard({ name: "team board" }, boss)

    const member = await session("lb-member")
    const listed = await list(`?business_id=${team}`, member)
    expect(listed.status, listed.text).toBe(200)
    expect(ids(listed.body.leaderboards)).toEqual([id])
    expect(ids((await list("", member)).body.leaderboards)).not.toContain(id)

    const got = await getLeaderboard(id, member)
    expect(got.status, got.text).toBe(200)
    expect(got.body.leaderboard).toMatchObject({ id, business_id: team, name: "team board" })

    const made = await createLeaderboard({ name: "member's board", business_id: team }, member)
    expect(made.status, made.text).toBe(201)
    expect(made.body.leaderboard.business_id).toBe(team)
    expect(ids((await list("", boss)).body.leaderboards)).toEqual([made.body.leaderboard.id, id])
  })
})
