import { DateTime } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CandidateId, LeaderboardId } from "@podium/domain/leaderboards"
import type { WorkspaceId } from "@podium/domain/shared"
import type { UpdateLeaderboardRequest } from "@podium/adapters-http/leaderboards/LeaderboardsApi"
import {
  aRouterCandidate,
  apiToken,
  type NewCandidate,
  type NewLeaderboard,
  type SignedIn,
  signedIn
} from "./support/Builders.ts"
import { type ApiFailure, type Caller, client, expectError, expectValidation, unchecked } from "./support/Client.ts"
import { type Podium, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

let podium: Podium
let owner: SignedIn

beforeAll(async () => {
  podium = await startPodium()
  owner = await signedIn(podium, "lb-owner")
})
afterAll(() => podium.stop())

const isoMillis = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const uuidV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const datasetUrl = "https://data.example.com/rows.jsonl"

/** This file's leaderboards read a dataset by GET, from `datasetUrl` unless said otherwise. */
const board = (overrides: Partial<NewLeaderboard> = {}): NewLeaderboard => ({
  name: "Support answers",
  dataset_url: datasetUrl,
  ...overrides
})

type ListQuery = { readonly limit?: number; readonly offset?: number; readonly business_id?: WorkspaceId }
type Update = typeof UpdateLeaderboardRequest.Type
type Json = Record<string, unknown>

const create = (payload: NewLeaderboard, api: Caller = owner.api) => api((c) => c.leaderboards.create({ payload }))
const list = (query: ListQuery = {}, api: Caller = owner.api) => api((c) => c.leaderboards.list({ query }))
const getLeaderboard = (leaderboard_id: LeaderboardId, api: Caller = owner.api) =>
  api((c) => c.leaderboards.get({ params: { leaderboard_id } }))
const patchLeaderboard = (leaderboard_id: LeaderboardId, payload: Update, api: Caller = owner.api) =>
  api((c) => c.leaderboards.update({ params: { leaderboard_id }, payload }))
const removeLeaderboard = (leaderboard_id: LeaderboardId, api: Caller = owner.api) =>
  api((c) => c.leaderboards.remove({ params: { leaderboard_id } }))
const listModels = async (leaderboard_id: LeaderboardId, api: Caller = owner.api) =>
  (await api((c) => c.leaderboards.listModels({ params: { leaderboard_id } }))).models
const addCandidate = (leaderboard_id: LeaderboardId, payload: NewCandidate, api: Caller = owner.api) =>
  api((c) => c.leaderboards.addModel({ params: { leaderboard_id }, payload }))
const removeCandidate = (leaderboard_id: LeaderboardId, leaderboard_model_id: CandidateId, api: Caller = owner.api) =>
  api((c) => c.leaderboards.removeModel({ params: { leaderboard_id, leaderboard_model_id } }))

/** Payloads the contract forbids, which the typed client will not send. */
const sendUnchecked = (method: string, path: string, json?: Json) =>
  unchecked(podium, method, path, { token: owner.session, json })

/** Creates a leaderboard and returns its `leaderboard` object. */
const newLeaderboard = async (overrides: Partial<NewLeaderboard> = {}, api: Caller = owner.api) =>
  (await create(board(overrides), api)).leaderboard

/** Adds a Router candidate (or as `overrides` say) and returns its `model` object. */
const newCandidate = async (leaderboardId: LeaderboardId, overrides: Partial<NewCandidate> = {}, api: Caller = owner.api) =>
  (await addCandidate(leaderboardId, aRouterCandidate(overrides), api)).model

const ids = (items: ReadonlyArray<{ readonly id: string }>) => items.map((item) => item.id)
const unknownLeaderboard = () => LeaderboardId.make(randomUUID())

describe("creating leaderboards", () => {
  it("returns the leaderboard and its challenge, with defaults", async () => {
    const { leaderboard, challenge } = await create(board({ name: "Support answers" }))
    expect(leaderboard).toEqual({
      id: expect.stringMatching(uuidV7),
      business_id: owner.workspace,
      name: "Support answers",
      description: "",
      status: "active",
      dataset_type: "GET",
      dataset_url: datasetUrl,
      eval_type: "exact",
      chosen_model_strategy: "ranking_winner",
      chosen_leaderboard_model_id: null,
      schedule: {},
      serving_policy: { alpha: 0.05, min_rows: 30, switch_when: "significantly_better", margin: 0.02 },
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
    } as const
    const created = await create({ name: "Judged", description: "LLM-as-judge", ...given })
    expect(created.challenge).toEqual({ ...given, dataset_url: null })
    expect(created.leaderboard).toMatchObject({
      description: "LLM-as-judge",
      dataset_type: "PUSH",
      dataset_url: null,
      eval_type: "judge"
    })
    const fetched = await getLeaderboard(created.leaderboard.id)
    expect(fetched.challenge).toEqual(created.challenge)
    expect(fetched.leaderboard).toEqual(created.leaderboard)
  })

  it("a GET dataset's dataset_url is http(s) when given, and may come later; a PUSH dataset needs none", async () => {
    const missing = await create({ name: "no url" })
    expect(missing.challenge).toMatchObject({ dataset_type: "GET", dataset_url: null })
    await expectValidation(create(board({ dataset_url: "ftp://data.example.com/rows" })), ["payload", "dataset_url"], "ftp")
    await expectValidation(create(board({ dataset_url: "rows.jsonl" })), ["payload", "dataset_url"], "relative")
    const push = await create({ name: "pushed", dataset_type: "PUSH" })
    expect(push.challenge.dataset_url).toBeNull()
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
      const reply = sendUnchecked("POST", "/api/leaderboards", { name: "Support answers", dataset_url: datasetUrl, ...json })
      await expectValidation(reply, path, JSON.stringify(json))
    }
    await expectValidation(sendUnchecked("POST", "/api/leaderboards", { dataset_url: datasetUrl }), ["payload", "name"], "no name")
  })
})

describe("listing leaderboards", () => {
  it("lists newest first and pages with limit, offset and next_offset", async () => {
    const pager = await signedIn(podium, "lb-pager")
    const first = await newLeaderboard({ name: "first" }, pager.api)
    const second = await newLeaderboard({ name: "second" }, pager.api)
    const third = await newLeaderboard({ name: "third" }, pager.api)

    const all = await list({}, pager.api)
    expect(ids(all.leaderboards)).toEqual([third.id, second.id, first.id])
    expect(all.next_offset).toBeNull()
    expect(all.leaderboards[0]).toEqual(third)

    const page1 = await list({ limit: 2 }, pager.api)
    expect(ids(page1.leaderboards)).toEqual([third.id, second.id])
    expect(page1.next_offset).toBe(2)

    const page2 = await list({ limit: 2, offset: 2 }, pager.api)
    expect(ids(page2.leaderboards)).toEqual([first.id])
    expect(page2.next_offset).toBeNull()

    expect(await list({ offset: 10 }, pager.api)).toEqual({ leaderboards: [], next_offset: null })
  })

  it("rejects out-of-range limit and offset instead of clamping", async () => {
    for (const qs of ["?limit=0", "?limit=1001", "?offset=-1", "?limit=abc", "?limit=1.5", "?offset=x"]) {
      await expectError(sendUnchecked("GET", `/api/leaderboards${qs}`), 400, "validation_failed", qs)
    }
    await list({ limit: 1000 })
    await list({ limit: 1 })
  })
})

describe("getting a leaderboard", () => {
  it("returns the leaderboard, its challenge, candidates and runs", async () => {
    const created = await create(board({ name: "detail", system_prompt: "Be brief." }))
    expect(await getLeaderboard(created.leaderboard.id)).toEqual({
      leaderboard: created.leaderboard,
      challenge: created.challenge,
      models: [],
      runs: []
    })
  })

  it("an unknown id is 404 and a malformed id is 400", async () => {
    await expectError(getLeaderboard(unknownLeaderboard()), 404, "not_found")
    await expectError(sendUnchecked("GET", "/api/leaderboards/not-a-uuid"), 400, "validation_failed")
  })
})

describe("updating leaderboards", () => {
  it("changes only what is sent", async () => {
    const created = await create(board({ description: "before", system_prompt: "Be brief.", dedupe: true }))
    const { id } = created.leaderboard
    const updated = await patchLeaderboard(id, { name: "renamed" })
    expect(updated.leaderboard).toEqual({
      ...created.leaderboard,
      name: "renamed",
      updated_at: expect.stringMatching(isoMillis)
    })
    expect(updated.challenge).toEqual(created.challenge)
    expect(Date.parse(updated.leaderboard.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.leaderboard.updated_at))
    const fetched = await getLeaderboard(id)
    expect(fetched.leaderboard).toEqual(updated.leaderboard)
    expect(fetched.challenge).toEqual(created.challenge)
  })

  it("challenge fields change the challenge", async () => {
    const { id } = await newLeaderboard()
    const updated = await patchLeaderboard(id, {
      system_prompt: "New prompt",
      dataset_url: "https://data.example.com/v2.jsonl",
      eval_type: "human",
      daily_event_limit: 10
    })
    expect(updated.challenge).toMatchObject({
      system_prompt: "New prompt",
      dataset_url: "https://data.example.com/v2.jsonl",
      eval_type: "human",
      daily_event_limit: 10,
      model_prompt: null,
      dataset_type: "GET"
    })
    expect(updated.leaderboard).toMatchObject({ dataset_url: "https://data.example.com/v2.jsonl", eval_type: "human" })
    expect((await getLeaderboard(id)).challenge).toEqual(updated.challenge)

    await expectValidation(patchLeaderboard(id, { dataset_url: "not a url" }), ["payload", "dataset_url"], "bad url")
    const path = `/api/leaderboards/${id}`
    await expectValidation(sendUnchecked("PATCH", path, { eval_type: "fuzzy" }), ["payload", "eval_type"], "bad enum")
    await expectValidation(sendUnchecked("PATCH", path, { daily_event_limit: -5 }), ["payload", "daily_event_limit"], "negative")
    await expectValidation(sendUnchecked("PATCH", path, { name: "  " }), ["payload", "name"], "blank name")
    const switched = await patchLeaderboard(id, { dataset_type: "PUSH" })
    expect(switched.challenge.dataset_type).toBe("PUSH")
  })

  it("keeps unknown properties and returns them on the leaderboard", async () => {
    const { id } = await newLeaderboard({ name: "open object" })
    const first = await patchLeaderboard(id, { team_label: "growth", nested: { a: 1 } })
    expect(first.leaderboard).toMatchObject({ id, name: "open object", team_label: "growth", nested: { a: 1 } })

    expect((await getLeaderboard(id)).leaderboard).toMatchObject({ team_label: "growth", nested: { a: 1 } })
    const listed = (await list()).leaderboards.find((l) => l.id === id)
    expect(listed).toMatchObject({ team_label: "growth", nested: { a: 1 } })

    const second = await patchLeaderboard(id, { priority: 3, schedule: { cron: "0 * * * *" } })
    expect(second.leaderboard).toMatchObject({
      team_label: "growth",
      nested: { a: 1 },
      priority: 3,
      schedule: { cron: "0 * * * *", timezone: "UTC", next_run_at: expect.stringMatching(/:00:00\.000Z$/) }
    })
    expect((await getLeaderboard(id)).leaderboard).toEqual(second.leaderboard)
  })

  it("unknown properties cannot overwrite server-owned fields", async () => {
    const created = await newLeaderboard({ name: "owned fields" })
    const status = await patchLeaderboard(created.id, {
      id: randomUUID(),
      business_id: randomUUID(),
      created_at: "2000-01-01T00:00:00.000Z",
      deleted_at: "2000-01-01T00:00:00.000Z"
    }).then(() => 200, (failure: ApiFailure) => failure.status)
    // Rejecting them is fine too; what must not happen is that they take effect.
    expect([200, 400]).toContain(status)
    expect((await getLeaderboard(created.id)).leaderboard).toMatchObject({
      id: created.id,
      business_id: owner.workspace,
      created_at: created.created_at
    })
    expect(ids((await list()).leaderboards)).toContain(created.id)
  })

  it("status: running is the service's, paused is allowed, archived is read-only until reactivated", async () => {
    const { id } = await newLeaderboard({ name: "lifecycle" })
    const candidate = await newCandidate(id)
    await expectValidation(patchLeaderboard(id, { status: "running" }), ["payload", "status"], "running")
    await expectValidation(sendUnchecked("PATCH", `/api/leaderboards/${id}`, { status: "deleted" }), ["payload", "status"], "unknown status")

    expect((await patchLeaderboard(id, { status: "paused" })).leaderboard.status).toBe("paused")
    expect((await patchLeaderboard(id, { status: "archived" })).leaderboard.status).toBe("archived")
    expect((await getLeaderboard(id)).leaderboard.status).toBe("archived")

    await expectError(patchLeaderboard(id, { name: "changed" }), 409, "leaderboard_archived", "rename")
    await expectError(patchLeaderboard(id, { status: "archived", name: "changed" }), 409, "leaderboard_archived", "both")
    await expectError(patchLeaderboard(id, { team_label: "x" }), 409, "leaderboard_archived", "extra")
    await expectError(addCandidate(id, aRouterCandidate({ name: "late", model_name: "x/y" })), 409, "leaderboard_archived", "add")
    await expectError(removeCandidate(id, candidate.id), 409, "leaderboard_archived", "remove candidate")
    expect((await getLeaderboard(id)).leaderboard.name).toBe("lifecycle")
    expect(ids(await listModels(id))).toEqual([candidate.id])

    expect((await patchLeaderboard(id, { status: "active" })).leaderboard.status).toBe("active")
    expect((await patchLeaderboard(id, { name: "changed" })).leaderboard.name).toBe("changed")
  })

  it("manual choice needs a chosen candidate of this leaderboard", async () => {
    const { id } = await newLeaderboard({ name: "choice" })
    const other = await newLeaderboard({ name: "other" })
    const foreign = await newCandidate(other.id)
    const candidate = await newCandidate(id)

    await expectValidation(patchLeaderboard(id, { chosen_model_strategy: "manual" }), ["payload", "chosen_leaderboard_model_id"], "none")
    await expectValidation(
      patchLeaderboard(id, { chosen_model_strategy: "manual", chosen_leaderboard_model_id: CandidateId.make(randomUUID()) }),
      ["payload", "chosen_leaderboard_model_id"],
      "unknown id"
    )
    await expectValidation(
      patchLeaderboard(id, { chosen_model_strategy: "manual", chosen_leaderboard_model_id: foreign.id }),
      ["payload", "chosen_leaderboard_model_id"],
      "another leaderboard's candidate"
    )
    await expectValidation(
      sendUnchecked("PATCH", `/api/leaderboards/${id}`, { chosen_model_strategy: "automatic" }),
      ["payload", "chosen_model_strategy"],
      "unknown strategy"
    )
    expect((await getLeaderboard(id)).leaderboard).toMatchObject({
      chosen_model_strategy: "ranking_winner",
      chosen_leaderboard_model_id: null
    })

    const chosen = await patchLeaderboard(id, { chosen_model_strategy: "manual", chosen_leaderboard_model_id: candidate.id })
    expect(chosen.leaderboard).toMatchObject({
      chosen_model_strategy: "manual",
      chosen_leaderboard_model_id: candidate.id
    })
    expect((await getLeaderboard(id)).leaderboard).toMatchObject({
      chosen_model_strategy: "manual",
      chosen_leaderboard_model_id: candidate.id
    })
    await expectValidation(patchLeaderboard(id, { chosen_leaderboard_model_id: null }), ["payload", "chosen_leaderboard_model_id"], "unset")

    const back = await patchLeaderboard(id, { chosen_model_strategy: "ranking_winner", chosen_leaderboard_model_id: null })
    expect(back.leaderboard).toMatchObject({ chosen_model_strategy: "ranking_winner", chosen_leaderboard_model_id: null })
  })
})

describe("deleting leaderboards", () => {
  it("returns {id, deleted: true}, then the leaderboard is 404 everywhere", async () => {
    const { id } = await newLeaderboard({ name: "doomed" })
    const candidate = await newCandidate(id)
    expect(await removeLeaderboard(id)).toEqual({ id, deleted: true })

    await expectError(getLeaderboard(id), 404, "not_found", "get")
    await expectError(patchLeaderboard(id, { name: "zombie" }), 404, "not_found", "patch")
    await expectError(removeLeaderboard(id), 404, "not_found", "delete again")
    await expectError(listModels(id), 404, "not_found", "list models")
    await expectError(addCandidate(id, aRouterCandidate({ name: "late", model_name: "x/y" })), 404, "not_found", "add model")
    await expectError(removeCandidate(id, candidate.id), 404, "not_found", "remove model")
    expect(ids((await list()).leaderboards)).not.toContain(id)

    const rows = await query(podium.databaseUrl, (sql) => sql`SELECT deleted_at FROM leaderboards WHERE id = ${id}`)
    expect(rows).toHaveLength(1) // a soft delete
    expect(rows[0]!["deleted_at"]).not.toBeNull()
  })
})

describe("candidate models", () => {
  it("adds a candidate of each platform", async () => {
    const { id } = await newLeaderboard({ name: "platforms" })
    const serviceModel = (await podium.request("POST", "/api/models", { token: owner.session, json: { name: "our model" } })).body.model.id

    const router = (await addCandidate(id, {
      name: "gpt mini",
      model_name: "openai/gpt-4o-mini",
      input_price_per_m_tokens: 0.15,
      output_price_per_m_tokens: 0.6
    })).model
    expect(router).toEqual({
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
      created_at: router.created_at
    })
    expect(Math.abs(DateTime.toEpochMillis(router.created_at) - Date.now())).toBeLessThan(60_000)

    const hub = (await addCandidate(id, {
      name: "llama",
      platform: "Hub",
      model_name: "meta-llama/Llama-3.1-8B-Instruct",
      model_url: "https://hub.example.com/meta-llama/Llama-3.1-8B-Instruct"
    })).model
    expect(hub).toMatchObject({
      platform: "Hub",
      model_name: "meta-llama/Llama-3.1-8B-Instruct",
      model_url: "https://hub.example.com/meta-llama/Llama-3.1-8B-Instruct",
      input_price_per_m_tokens: null,
      output_price_per_m_tokens: null
    })

    const custom = (await addCandidate(id, {
      name: "in-house",
      platform: "Custom",
      url: "https://llm.example.com/v1",
      model_name: "house-7b",
      auth_type: "header",
      auth_header_name: "X-Api-Key",
      input_price_per_m_tokens: 0,
      output_price_per_m_tokens: 1.25
    })).model
    expect(custom).toMatchObject({
      platform: "Custom",
      url: "https://llm.example.com/v1",
      model_url: "https://llm.example.com/v1",
      model_name: "house-7b",
      auth_type: "header",
      auth_header_name: "X-Api-Key",
      has_token: false,
      input_price_per_m_tokens: 0,
      output_price_per_m_tokens: 1.25
    })

    const service = (await addCandidate(id, { name: "our model", platform: "Service", model_id: serviceModel })).model
    expect(service).toMatchObject({ platform: "Service", model_id: serviceModel, model_name: null, url: null })

    const listed = await listModels(id)
    expect(listed).toEqual([router, hub, custom, service])
    expect((await getLeaderboard(id)).models).toEqual(listed)
  })

  it("model_url is the candidate's endpoint; url is its alias, and both given must agree", async () => {
    const { id } = await newLeaderboard({ name: "endpoints" })
    const endpoint = "https://llm.example.com/v1"
    const byModelUrl = (await addCandidate(id, { name: "by model_url", platform: "Custom", model_url: endpoint })).model
    expect(byModelUrl).toMatchObject({ platform: "Custom", model_url: endpoint, url: endpoint })
    const byUrl = (await addCandidate(id, { name: "by url", platform: "Custom", url: endpoint })).model
    expect(byUrl).toMatchObject({ model_url: endpoint, url: endpoint })
    const byBoth = (await addCandidate(id, { name: "both", platform: "Custom", url: endpoint, model_url: endpoint })).model
    expect(byBoth).toMatchObject({ model_url: endpoint, url: endpoint })
    await expectValidation(
      addCandidate(id, { name: "disagree", platform: "Custom", url: endpoint, model_url: "https://other.example.com/v1" }),
      ["payload", "model_url"]
    )
    // read back as stored, by the list and by the leaderboard
    expect((await listModels(id)).map((m) => [m.name, m.model_url, m.url])).toEqual([
      ["by model_url", endpoint, endpoint],
      ["by url", endpoint, endpoint],
      ["both", endpoint, endpoint]
    ])
    expect((await getLeaderboard(id)).models.map((m) => m.model_url)).toEqual([endpoint, endpoint, endpoint])
  })

  it("rejects a candidate missing what its platform needs", async () => {
    const { id } = await newLeaderboard({ name: "requirements" })
    const missing: Array<[NewCandidate, ReadonlyArray<string>]> = [
      [{ name: "router" }, ["payload", "model_name"]],
      [{ name: "router", platform: "Router" }, ["payload", "model_name"]],
      [{ name: "hub", platform: "Hub" }, ["payload", "model_name"]],
      [{ name: "custom", platform: "Custom" }, ["payload", "model_url"]],
      [{ name: "custom", platform: "Custom", model_url: "ftp://llm.example.com" }, ["payload", "model_url"]],
      [{ name: "custom", platform: "Custom", url: "ftp://llm.example.com" }, ["payload", "url"]],
      [{ name: "custom", platform: "Custom", url: "https://llm.example.com/v1", auth_type: "header" }, ["payload", "auth_header_name"]],
      [{ name: "service", platform: "Service" }, ["payload", "model_id"]]
    ]
    for (const [payload, path] of missing) {
      await expectValidation(addCandidate(id, payload), path, JSON.stringify(payload))
    }
    const forbidden: Array<[Json, ReadonlyArray<string>]> = [
      [{ name: "service", platform: "Service", model_id: "not-a-uuid" }, ["payload", "model_id"]],
      [{ name: "x", platform: "OpenAI", model_name: "x" }, ["payload", "platform"]],
      [{ name: "x", model_name: "x", auth_type: "basic" }, ["payload", "auth_type"]],
      [{ name: "x", model_name: "x", input_price_per_m_tokens: -1 }, ["payload", "input_price_per_m_tokens"]],
      [{ name: "  ", model_name: "x" }, ["payload", "name"]],
      [{ model_name: "x" }, ["payload", "name"]]
    ]
    for (const [json, path] of forbidden) {
      await expectValidation(sendUnchecked("POST", `/api/leaderboards/${id}/models`, json), path, JSON.stringify(json))
    }
    expect(await listModels(id)).toEqual([])
  })

  it("stores the candidate's token encrypted and never returns it", async () => {
    const { id } = await newLeaderboard({ name: "secrets" })
    const secret = `sk-candidate-${randomUUID()}`
    // The bytes on the wire: the secret must not be in them, whatever the contract would decode.
    const models = `/api/leaderboards/${id}/models`
    const reply = await podium.request("POST", models, {
      token: owner.session,
      json: { name: "private endpoint", platform: "Custom", url: "https://llm.example.com/v1", token: secret }
    })
    expect(reply.status, reply.text).toBe(201)
    expect(reply.body.model).toMatchObject({ has_token: true, auth_type: "bearer" })
    expect(reply.body.model).not.toHaveProperty("token")
    expect(reply.body.model.created_at).toMatch(isoMillis)
    expect(reply.text).not.toContain(secret)

    const listed = await podium.request("GET", models, { token: owner.session })
    expect(listed.body.models[0]).toMatchObject({ id: reply.body.model.id, has_token: true })
    expect(listed.text).not.toContain(secret)
    expect((await podium.request("GET", `/api/leaderboards/${id}`, { token: owner.session })).text).not.toContain(secret)

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

    expect(await removeCandidate(id, first.id)).toEqual({ id: first.id, deleted: true })
    await expectError(removeCandidate(id, first.id), 404, "not_found", "again")
    await expectError(removeCandidate(id, CandidateId.make(randomUUID())), 404, "not_found", "unknown")
    await expectError(removeCandidate(id, neighbour.id), 404, "not_found", "another leaderboard's")
    expect(ids(await listModels(id))).toEqual([second.id])
    expect(ids(await listModels(other.id))).toEqual([neighbour.id])
  })

  it("removing the chosen candidate clears the choice and falls back to the ranking winner", async () => {
    const { id } = await newLeaderboard({ name: "chosen removal" })
    const chosen = await newCandidate(id, { name: "chosen" })
    await newCandidate(id, { name: "spare" })
    await patchLeaderboard(id, { chosen_model_strategy: "manual", chosen_leaderboard_model_id: chosen.id })

    await removeCandidate(id, chosen.id)
    const after = await getLeaderboard(id)
    expect(after.leaderboard.chosen_leaderboard_model_id).toBeNull()
    expect(after.leaderboard.chosen_model_strategy).toBe("ranking_winner")
    // The leaderboard stays editable (a manual strategy without a choice would fail every PATCH).
    await patchLeaderboard(id, { name: "still editable" })
  })
})

describe("access", () => {
  it("another workspace sees nothing", async () => {
    const { id } = await newLeaderboard({ name: "private" })
    const candidate = await newCandidate(id)
    const stranger = await signedIn(podium, "lb-stranger")
    const attempts: Record<string, () => Promise<unknown>> = {
      get: () => getLeaderboard(id, stranger.api),
      patch: () => patchLeaderboard(id, { name: "mine now" }, stranger.api),
      delete: () => removeLeaderboard(id, stranger.api),
      "list models": () => listModels(id, stranger.api),
      "add model": () => addCandidate(id, aRouterCandidate({ name: "intruder", model_name: "x/y" }), stranger.api),
      "remove model": () => removeCandidate(id, candidate.id, stranger.api)
    }
    for (const [label, attempt] of Object.entries(attempts)) {
      await expectError(attempt(), 404, "not_found", label)
    }
    expect(ids((await list({}, stranger.api)).leaderboards)).not.toContain(id)
    await expectError(list({ business_id: owner.workspace }, stranger.api), 403, "forbidden", "list theirs")
    await expectError(create(board({ business_id: owner.workspace }), stranger.api), 403, "forbidden", "create in theirs")

    const still = await getLeaderboard(id)
    expect(still.leaderboard.name).toBe("private")
    expect(ids(still.models)).toEqual([candidate.id])
  })

  it("API tokens need leaderboards:read to read and leaderboards:write to write", async () => {
    const { id } = await newLeaderboard({ name: "scoped" })
    const candidate = await newCandidate(id)
    const reader = client(podium, await apiToken(owner.api, ["leaderboards:read"]))
    const writer = client(podium, await apiToken(owner.api, ["leaderboards:write"]))

    expect(ids((await list({}, reader)).leaderboards)).toContain(id)
    expect(ids((await getLeaderboard(id, reader)).models)).toEqual([candidate.id])
    await listModels(id, reader)

    const writes: Record<string, () => Promise<unknown>> = {
      create: () => create({ name: "nope", dataset_type: "PUSH" }, reader),
      patch: () => patchLeaderboard(id, { name: "nope" }, reader),
      delete: () => removeLeaderboard(id, reader),
      "add model": () => addCandidate(id, aRouterCandidate({ name: "nope", model_name: "x/y" }), reader),
      "remove model": () => removeCandidate(id, candidate.id, reader)
    }
    for (const [label, write] of Object.entries(writes)) {
      const refused = await expectError(write(), 403, "insufficient_scope", label)
      expect(refused.error.details?.["required_scope"], label).toBe("leaderboards:write")
    }

    const reads: Record<string, () => Promise<unknown>> = {
      list: () => list({}, writer),
      get: () => getLeaderboard(id, writer),
      "list models": () => listModels(id, writer)
    }
    for (const [label, read] of Object.entries(reads)) {
      const refused = await expectError(read(), 403, "insufficient_scope", label)
      expect(refused.error.details?.["required_scope"], label).toBe("leaderboards:read")
    }
    const made = await create(board({ name: "by token" }), writer)
    expect(made.leaderboard.business_id).toBe(owner.workspace)
    await patchLeaderboard(id, { description: "by token" }, writer)
    expect((await getLeaderboard(id)).leaderboard.name).toBe("scoped")
  })

  it("an API token of another workspace gets 404", async () => {
    const { id } = await newLeaderboard({ name: "not theirs" })
    const stranger = await signedIn(podium, "lb-token-stranger")
    const theirs = client(podium, await apiToken(stranger.api, ["leaderboards:read", "leaderboards:write"]))
    await expectError(getLeaderboard(id, theirs), 404, "not_found", "get")
    await expectError(patchLeaderboard(id, { name: "x" }, theirs), 404, "not_found", "patch")
    await expectError(list({ business_id: owner.workspace }, theirs), 403, "forbidden", "list")
  })

  it("no credential is 401 with WWW-Authenticate: Bearer", async () => {
    const { id } = await newLeaderboard({ name: "anonymous" })
    const anonymous = client(podium)
    const attempts: Record<string, () => Promise<unknown>> = {
      list: () => list({}, anonymous),
      create: () => create({ name: "x" }, anonymous),
      get: () => getLeaderboard(id, anonymous),
      patch: () => patchLeaderboard(id, { name: "x" }, anonymous),
      delete: () => removeLeaderboard(id, anonymous),
      "list models": () => listModels(id, anonymous)
    }
    for (const [label, attempt] of Object.entries(attempts)) {
      const refused = await expectError(attempt(), 401, "unauthorized", label)
      expect(refused.headers["www-authenticate"], label).toBe("Bearer")
    }
    await getLeaderboard(id)
  })

  it("a member of a team workspace sees its leaderboards through business_id", async () => {
    const boss = await signedIn(podium, "lb-boss")
    const team = boss.workspace
    await boss.api((c) => c.invites.invite({ payload: { email: "lb-member@example.com" } }))
    const { id } = await newLeaderboard({ name: "team board" }, boss.api)

    const member = await signedIn(podium, "lb-member")
    expect(ids((await list({ business_id: team }, member.api)).leaderboards)).toEqual([id])
    expect(ids((await list({}, member.api)).leaderboards)).not.toContain(id)

    expect((await getLeaderboard(id, member.api)).leaderboard).toMatchObject({ id, business_id: team, name: "team board" })

    const made = await create(board({ name: "member's board", business_id: team }), member.api)
    expect(made.leaderboard.business_id).toBe(team)
    expect(ids((await list({}, boss.api)).leaderboards)).toEqual([made.leaderboard.id, id])
  })
})
