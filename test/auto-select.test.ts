import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import type { AutoSelectRequest } from "@podium/adapters-http/runs/AutoSelectApi"
import { aLeaderboard, apiToken, type SignedIn, signedIn } from "./support/Builders.ts"
import { type Caller, client, expectError, expectValidation, unchecked } from "./support/Client.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"
import {
  catalogueRouterKey,
  listedModel,
  type RouterCatalogueFake,
  startRouterCatalogueFake
} from "./fakes/RouterCatalogueFake.ts"

let fake: RouterCatalogueFake
let podium: Podium
let owner: SignedIn

// Per token, as the router lists them; per million: tiny 0.1/0.2, small 0.5/1.5, mid 1/2, fast 2/4, big 3/15, huge 10/30.
const catalogue = [
  listedModel("acme/huge-open", "0.00001", "0.00003", "acme/Huge"),
  listedModel("acme/small-closed", "0.0000005", "0.0000015", ""),
  listedModel("acme/tiny-open", "0.0000001", "0.0000002", "acme/Tiny"),
  { ...listedModel("openrouter/auto", "-1", "-1"), name: "Auto Router" },
  listedModel("acme/mid-open", "0.000001", "0.000002", "acme/Mid"),
  listedModel("acme/big-closed", "0.000003", "0.000015"),
  listedModel("acme/fast-open", "0.000002", "0.000004", "acme/Fast")
]
// Milliseconds. p95 is interpolated: tiny 1000 + (2800 - 1000) · 5/9 = 2000; mid 1500; fast's best endpoint ≈ 311.
const latencies = {
  "acme/tiny-open": [{ p50: 500, p75: 800, p90: 1000, p99: 2800 }],
  "acme/mid-open": [{ p50: 600, p75: 800, p90: 1000, p99: 1900 }, null],
  "acme/fast-open": [{ p50: 900, p75: 2000, p90: 3000, p99: 9000 }, { p50: 100, p75: 150, p90: 200, p99: 400 }],
  "acme/big-closed": [{ p50: 50, p75: 80, p90: 100, p99: 200 }],
  "acme/huge-open": [{ p50: 50, p75: 80, p90: 100, p99: 200 }]
  // acme/small-closed: no endpoints, so no latency data
}

beforeAll(async () => {
  fake = await startRouterCatalogueFake()
  podium = await startPodium({ ROUTER_BASE_URL: fake.routerBaseUrl })
  owner = await signedIn(podium, "as-owner")
  await owner.api((c) => c.integrations.validate({ payload: { provider: "router", token: catalogueRouterKey } }))
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})
beforeEach(() => {
  fake.models = structuredClone(catalogue)
  fake.latencies = structuredClone(latencies)
  fake.failing = false
  fake.seen.length = 0
})

type Request = typeof AutoSelectRequest.Type

const newLeaderboard = async (api: Caller = owner.api): Promise<LeaderboardId> =>
  (await api((c) => c.leaderboards.create({ payload: aLeaderboard({ name: "auto" }) }))).leaderboard.id
const autoSelect = (leaderboard_id: LeaderboardId, payload: Request, api: Caller = owner.api) =>
  api((c) => c.autoSelect.select({ params: { leaderboard_id }, payload }))
const models = async (leaderboard_id: LeaderboardId) =>
  (await owner.api((c) => c.leaderboards.listModels({ params: { leaderboard_id } }))).models
const ids = (added: ReadonlyArray<{ readonly model_name: string | null }>) => added.map((m) => m.model_name)
const none = { unstorable_text: 0, already_candidate: 0, open_source: 0, cost: 0, latency: 0, over_limit: 0 }
const endpointCalls = () => fake.seen.filter((s) => s.path.endsWith("/endpoints")).map((s) => s.path)

describe("auto-select", () => {
  it("adds the 3 cheapest priced models as Router candidates with the catalogue's names and prices", async () => {
    const id = await newLeaderboard()
    const result = await autoSelect(id, {})
    expect(ids(result.added)).toEqual(["acme/tiny-open", "acme/small-closed", "acme/mid-open"])
    expect(result.considered).toBe(7)
    // the variable-priced router (-1) has no usable price
    expect(result.rejected_by).toEqual({ ...none, cost: 1, over_limit: 3 })
    expect(result.added[0]).toMatchObject({
      leaderboard_id: id,
      platform: "Router",
      name: "Acme: tiny-open",
      model_name: "acme/tiny-open",
      has_token: false,
      input_price_per_m_tokens: 0.1,
      output_price_per_m_tokens: 0.2
    })
    // The catalogue was read with the workspace's router token; latency was not asked.
    expect(fake.seen).toEqual([{ path: "/api/v1/models", authorization: `Bearer ${catalogueRouterKey}` }])
    const listed = await models(id)
    expect(listed.map((m) => [m.id, m.platform, m.model_name, m.input_price_per_m_tokens, m.output_price_per_m_tokens]))
      .toEqual([
        [result.added[0]!.id, "Router", "acme/tiny-open", 0.1, 0.2],
        [result.added[1]!.id, "Router", "acme/small-closed", 0.5, 1.5],
        [result.added[2]!.id, "Router", "acme/mid-open", 1, 2]
      ])
  })

  it("limit_cost keeps prices within both bounds, bounds included", async () => {
    const result = await autoSelect(await newLeaderboard(), {
      number_of_models: 5,
      limit_cost: true,
      input_price_per_m_tokens: 1,
      output_price_per_m_tokens: 2
    })
    expect(ids(result.added)).toEqual(["acme/tiny-open", "acme/small-closed", "acme/mid-open"])
    expect(result.rejected_by).toEqual({ ...none, cost: 4 })
    const inputOnly = await autoSelect(await newLeaderboard(), {
      number_of_models: 10,
      limit_cost: true,
      input_price_per_m_tokens: 2
    })
    expect(ids(inputOnly.added)).toEqual(["acme/tiny-open", "acme/small-closed", "acme/mid-open", "acme/fast-open"])
  })

  it("only_open_source keeps models with a hugging_face_id", async () => {
    const result = await autoSelect(await newLeaderboard(), { number_of_models: 2, only_open_source: true })
    expect(ids(result.added)).toEqual(["acme/tiny-open", "acme/mid-open"])
    // small (""), big and auto (null) have no open weights
    expect(result.rejected_by).toEqual({ ...none, open_source: 3, over_limit: 2 })
  })

  it("limit_latency checks p95, interpolated between p90 and p99, through the best endpoint", async () => {
    const strict = await autoSelect(await newLeaderboard(), {
      number_of_models: 2,
      only_open_source: true,
      limit_latency: true,
      latency_p95_seconds: 1.999
    })
    // tiny's p95 is 2000 ms (its p90 alone would pass, its p99 alone would not be the bound);
    // fast passes through its second endpoint
    expect(ids(strict.added)).toEqual(["acme/mid-open", "acme/fast-open"])
    expect(strict.rejected_by).toEqual({ ...none, open_source: 3, latency: 1, over_limit: 1 })
    // cheapest first, only as many as there are places: huge is never asked
    expect(endpointCalls()).toEqual([
      "/api/v1/models/acme/tiny-open/endpoints",
      "/api/v1/models/acme/mid-open/endpoints",
      "/api/v1/models/acme/fast-open/endpoints"
    ])
    for (const call of fake.seen) expect(call.authorization).toBe(`Bearer ${catalogueRouterKey}`)

    const atTheBound = await autoSelect(await newLeaderboard(), {
      number_of_models: 2,
      only_open_source: true,
      limit_latency: true,
      latency_p95_seconds: 2
    })
    expect(ids(atTheBound.added)).toEqual(["acme/tiny-open", "acme/mid-open"])
  })

  it("limit_latency checks p99, and a model without latency data fails it", async () => {
    const result = await autoSelect(await newLeaderboard(), {
      number_of_models: 3,
      limit_latency: true,
      latency_p99_seconds: 2.5
    })
    // tiny's p99 is 2800 ms; small has no endpoints; mid (1900) and fast (400) and big (200) pass
    expect(ids(result.added)).toEqual(["acme/mid-open", "acme/fast-open", "acme/big-closed"])
    expect(result.rejected_by).toEqual({ ...none, cost: 1, latency: 2, over_limit: 1 })
    expect(result.considered).toBe(7)
  })

  it("skips models already Router candidates of the leaderboard, and adds fewer when fewer are left", async () => {
    const id = await newLeaderboard()
    await owner.api((c) =>
      c.leaderboards.addModel({ params: { leaderboard_id: id }, payload: { name: "by hand", model_name: "acme/tiny-open" } })
    )
    // the same model name on another platform is another candidate
    await owner.api((c) =>
      c.leaderboards.addModel({
        params: { leaderboard_id: id },
        payload: { name: "hub", platform: "Hub", model_name: "acme/small-closed" }
      })
    )
    const first = await autoSelect(id, {})
    expect(ids(first.added)).toEqual(["acme/small-closed", "acme/mid-open", "acme/fast-open"])
    expect(first.rejected_by).toEqual({ ...none, already_candidate: 1, cost: 1, over_limit: 2 })
    const second = await autoSelect(id, {})
    expect(ids(second.added)).toEqual(["acme/big-closed", "acme/huge-open"])
    expect(second.rejected_by).toEqual({ ...none, already_candidate: 4, cost: 1 })
    const third = await autoSelect(id, {})
    expect(third).toEqual({ added: [], considered: 7, rejected_by: { ...none, already_candidate: 6, cost: 1 } })
    expect((await models(id)).map((m) => [m.platform, m.model_name])).toEqual([
      ["Router", "acme/tiny-open"],
      ["Hub", "acme/small-closed"],
      ["Router", "acme/small-closed"],
      ["Router", "acme/mid-open"],
      ["Router", "acme/fast-open"],
      ["Router", "acme/big-closed"],
      ["Router", "acme/huge-open"]
    ])
  })

  it("skips catalogue entries Postgres cannot store (U+0000, lone surrogates in any text) and adds the rest", async () => {
    // each poisoned entry is cheaper than every clean one, so it would be chosen first
    const poisoned = (id: string, overrides: Record<string, unknown>) => ({
      ...listedModel(id, "0.00000001", "0.00000001", "acme/Cheap"),
      ...overrides
    })
    fake.models = [
      ...structuredClone(catalogue),
      poisoned("acme/nul\u0000id", {}),
      poisoned("acme/surrogate-name", { name: "Acme \ud800 cheap" }),
      poisoned("acme/low-surrogate-name", { name: "\udc00" }),
      poisoned("acme/surrogate-hub", { hugging_face_id: "acme/\udbff" }),
      poisoned("acme/nul-hub", { hugging_face_id: "acme/\u0000" }),
      // a price past what a double holds per million tokens has no usable price
      listedModel("acme/overflow", "1e303", "0")
    ]
    const id = await newLeaderboard()
    const result = await autoSelect(id, { number_of_models: 10 })
    expect(ids(result.added)).toEqual([
      "acme/tiny-open", "acme/small-closed", "acme/mid-open", "acme/fast-open", "acme/big-closed", "acme/huge-open"
    ])
    expect(result.considered).toBe(13)
    expect(result.rejected_by).toEqual({ ...none, unstorable_text: 5, cost: 2 })
    expect((await models(id)).map((m) => m.model_name)).toEqual(ids(result.added))
  })

  it("a name cut to 200 characters keeps its surrogate pairs whole", async () => {
    fake.models = [
      { ...listedModel("acme/long-a", "0.0000001", "0.0000001"), name: `${"a".repeat(199)}😀 and more` },
      { ...listedModel("acme/long-b", "0.0000002", "0.0000002"), name: `${"b".repeat(198)}😀 and more` }
    ]
    const result = await autoSelect(await newLeaderboard(), { number_of_models: 2 })
    expect(result.added.map((m) => m.name)).toEqual(["a".repeat(199), `${"b".repeat(198)}😀`])
  })

  it("a member of the workspace may auto-select", async () => {
    await owner.api((c) => c.invites.invite({ payload: { email: "as-member@example.com" } }))
    const member = client(podium, await session("as-member"))
    const result = await autoSelect(await newLeaderboard(), { number_of_models: 2 }, member)
    expect(ids(result.added)).toEqual(["acme/tiny-open", "acme/small-closed"])
  })
})

describe("auto-select refusals", () => {
  const path = (id: LeaderboardId) => `/api/leaderboards/${id}/models/auto-select`

  it("number_of_models is at least 2, and the limits are in range", async () => {
    const id = await newLeaderboard()
    const send = (json: unknown) => unchecked(podium, "POST", path(id), { token: owner.session, json })
    for (const [json, field] of [
      [{ number_of_models: 1 }, "number_of_models"],
      [{ number_of_models: 0 }, "number_of_models"],
      [{ number_of_models: 2.5 }, "number_of_models"],
      [{ number_of_models: "3" }, "number_of_models"],
      [{ limit_cost: true, input_price_per_m_tokens: -1 }, "input_price_per_m_tokens"],
      [{ limit_latency: true, latency_p95_seconds: 0 }, "latency_p95_seconds"],
      [{ limit_cost: "yes" }, "limit_cost"]
    ] as const) {
      await expectValidation(send(json), ["payload", field], JSON.stringify(json))
    }
    // a limit switched on must name a bound
    await expectValidation(autoSelect(id, { limit_cost: true }), ["payload", "limit_cost"])
    await expectValidation(autoSelect(id, { limit_latency: true }), ["payload", "limit_latency"])
    // the body is required, even if empty
    await expectValidation(unchecked(podium, "POST", path(id), { token: owner.session }), ["payload"], "no body")
    expect(await autoSelect(id, { number_of_models: 2 })).toMatchObject({ considered: 7 })
    expect(await models(id)).toHaveLength(2)
  })

  it("needs a session: an API token, even with every scope, is 401", async () => {
    const id = await newLeaderboard()
    const withToken = client(podium, await apiToken(owner.api))
    await expectError(autoSelect(id, {}, withToken), 401, "unauthorized")
    await expectError(autoSelect(id, {}, client(podium)), 401, "unauthorized")
    expect(fake.seen).toEqual([])
  })

  it("without a router integration in the leaderboard's workspace: 409 router_integration_missing", async () => {
    const other = await signedIn(podium, "as-no-router")
    const id = await newLeaderboard(other.api)
    const refused = await expectError(autoSelect(id, {}, other.api), 409, "router_integration_missing")
    expect(refused.error.details).toEqual({ business_id: other.workspace })
    expect(fake.seen).toEqual([])
    expect((await other.api((c) => c.leaderboards.listModels({ params: { leaderboard_id: id } }))).models).toEqual([])
  })

  it("another workspace's leaderboard is 404, and an archived one 409 leaderboard_archived", async () => {
    const id = await newLeaderboard()
    const stranger = client(podium, await session("as-stranger"))
    await expectError(autoSelect(id, {}, stranger), 404, "not_found")
    await owner.api((c) => c.leaderboards.update({ params: { leaderboard_id: id }, payload: { status: "archived" } }))
    await expectError(autoSelect(id, {}), 409, "leaderboard_archived")
    expect(fake.seen).toEqual([])
  })

  it("a router that fails is 502 upstream_error, and nothing is added", async () => {
    const id = await newLeaderboard()
    fake.failing = true
    const failed = await expectError(autoSelect(id, {}), 502, "upstream_error")
    expect(failed.error.details).toEqual({ provider: "router" })
    fake.failing = false
    fake.models = [{ id: 42 }] as unknown as typeof fake.models // not a model: left out
    expect(await autoSelect(id, {})).toEqual({ added: [], considered: 0, rejected_by: none })
    expect(await models(id)).toEqual([])
  })
})
