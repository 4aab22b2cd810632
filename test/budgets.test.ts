import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"
import { loopbackFake } from "./fakes/JsonFake.ts"

let fake: OpenAiFake
let podium: Podium
let owner: string

beforeAll(async () => {
  fake = await startOpenAiFake()
  podium = await startPodium()
  owner = await session("budget-owner")
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

/** A leaderboard served by a Custom candidate at the fake; each call costs 500 output tokens at `outputPrice`. */
const servedLeaderboard = async (prices: { input?: number; output?: number }) => {
  const id = (await podium.request("POST", "/api/leaderboards", { token: owner, json: { name: "b", dataset_type: "PUSH" } }))
    .body.leaderboard.id
  const model = (await podium.request("POST", `/api/leaderboards/${id}/models`, {
    token: owner,
    json: {
      name: "priced",
      platform: "Custom",
      url: fake.url,
      auth_type: "none",
      ...(prices.input === undefined ? {} : { input_price_per_m_tokens: prices.input }),
      ...(prices.output === undefined ? {} : { output_price_per_m_tokens: prices.output })
    }
  })).body.model.id
  await podium.request("PATCH", `/api/leaderboards/${id}`, {
    token: owner,
    json: { chosen_model_strategy: "manual", chosen_leaderboard_model_id: model }
  })
  return id as string
}
const budgetToken = async (limit: number) =>
  (await podium.request("POST", "/api/tokens", {
    token: owner,
    json: { name: "budgeted", scopes: ["leaderboards:inference"], budget_limit: limit, budget_reset_interval: "daily" }
  })).body as { secret: string; token: { id: string } }
const infer = (id: string, token: string) =>
  podium.request("POST", `/v1/leaderboard/${id}/inference`, { token, json: { input: "hi", max_tokens: 500 } })
const ledger = async (tokenId: string) => {
  const [spend] = await query(podium.databaseUrl, (sql) =>
    sql`SELECT settled_usd, reserved_usd FROM token_spend WHERE token_id = ${tokenId}`)
  const [open] = await query(podium.databaseUrl, (sql) =>
    sql`SELECT count(*)::int AS n FROM token_reservations WHERE token_id = ${tokenId}`)
  return { settled: Number(spend?.["settled_usd"] ?? 0), reserved: Number(spend?.["reserved_usd"] ?? 0), open: open!["n"] }
}

describe("token budgets", () => {
  it("50 parallel calls on a budget for about 10: spend stays within the budget plus what was in flight", async () => {
    // Each call costs 0.01 (500 output tokens at 20 per million), and the estimate is the same.
    const id = await servedLeaderboard({ input: 0, output: 20 })
    const { secret, token } = await budgetToken(0.095)
    const replies = await Promise.all(Array.from({ length: 50 }, () => infer(id, secret)))
    const ok = replies.filter((r) => r.status === 200).length
    const refused = replies.filter((r) => r.status === 429)
    expect(ok + refused.length).toBe(50)
    expect(ok).toBe(10)
    expect(refused[0]!.body.error).toMatchObject({ code: "budget_exceeded", details: { budget_limit: 0.095 } })
    const retryAfter = Number(refused[0]!.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(86_400)
    const after = await ledger(token.id)
    expect(after.open).toBe(0)
    expect(after.reserved).toBeCloseTo(0, 9)
    expect(after.settled).toBeCloseTo(0.1, 9)
    expect(after.settled).toBeLessThanOrEqual(0.095 + 0.01 + 1e-9)
    expect(fake.seen.filter((s) => s.path === "/chat/completions").length).toBeGreaterThanOrEqual(10)
  })

  it("a failed call releases its reservation and costs nothing", async () => {
    const id = await servedLeaderboard({ input: 0, output: 20 })
    const { secret, token } = await budgetToken(1)
    fake.mode = "error"
    try {
      expect((await infer(id, secret)).status).toBe(502)
    } finally {
      fake.mode = "ok"
    }
    expect(await ledger(token.id)).toEqual({ settled: 0, reserved: 0, open: 0 })
  })

  it("a zero budget refuses every call, priced or not", async () => {
    for (const prices of [{}, { input: 0, output: 20 }]) {
      const id = await servedLeaderboard(prices)
      const { secret, token } = await budgetToken(0)
      expect((await infer(id, secret)).status).toBe(429)
      expect(await ledger(token.id)).toMatchObject({ reserved: 0, open: 0 })
    }
  })

  it("tokens without a budget are not metered", async () => {
    const id = await servedLeaderboard({ input: 0, output: 20 })
    const plain = (await podium.request("POST", "/api/tokens", {
      token: owner,
      json: { name: "plain", scopes: ["leaderboards:inference"] }
    })).body
    expect((await infer(id, plain.secret)).status).toBe(200)
    const rows = await query(podium.databaseUrl, (sql) => sql`SELECT * FROM token_spend WHERE token_id = ${plain.token.id}`)
    expect(rows).toHaveLength(0)
  })
})

/**
 * An upstream that bills what a real one would: prompt tokens at most the UTF-8 bytes sent, and as
 * many output tokens as it is allowed (100,000 when the call sets no max_tokens). The model name
 * picks how it reports cost; `/router/models` is the router's price catalogue.
 */
const routerPrices = { prompt: "0.000001", completion: "0.00002" } // $1 and $20 per million tokens
const billing = loopbackFake((path, body) => {
  if (path === "/router/models") {
    return { data: [{ id: "acme/listed", pricing: routerPrices }, { id: "acme/free-text", pricing: { prompt: "n/a" } }] }
  }
  const prompt = (body.messages as Array<{ content: string }>).reduce((n, m) => n + Buffer.byteLength(m.content), 0)
  const completion = Math.min(body.max_tokens ?? 100_000, 100_000)
  const usage: Record<string, number> = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
  if (body.model === "reports-cost") usage.cost = 0.5
  return { id: "x", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "ok" } }], usage }
})

describe("spend never exceeds the limit by more than one call's cost (50 parallel calls each)", () => {
  let podium2: Podium
  let owner2: string
  beforeAll(async () => {
    await billing.start()
    podium2 = await startPodium({ ROUTER_BASE_URL: `${billing.url()}/router` })
    owner2 = await session("budget-scenarios")
  })
  afterAll(async () => {
    await podium2.stop()
    await billing.stop()
  })

  const scenario = async (candidate: Record<string, unknown>, limit: number, json: Record<string, unknown> = { input: "hi" }) => {
    const id = (await podium2.request("POST", "/api/leaderboards", { token: owner2, json: { name: "s", dataset_type: "PUSH" } }))
      .body.leaderboard.id
    const model = (await podium2.request("POST", `/api/leaderboards/${id}/models`, { token: owner2, json: candidate })).body.model.id
    await podium2.request("PATCH", `/api/leaderboards/${id}`, {
      token: owner2,
      json: { chosen_model_strategy: "manual", chosen_leaderboard_model_id: model }
    })
    const created = (await podium2.request("POST", "/api/tokens", {
      token: owner2,
      json: { name: "b", scopes: ["leaderboards:inference"], budget_limit: limit }
    })).body
    const replies = await Promise.all(Array.from({ length: 50 }, () =>
      podium2.request("POST", `/v1/leaderboard/${id}/inference`, { token: created.secret, json })))
    for (const r of replies) expect([200, 429], r.text).toContain(r.status)
    const [spend] = await query(podium2.databaseUrl, (sql) =>
      sql`SELECT settled_usd::text AS settled, reserved_usd::text AS reserved, unpriced_in_flight
          FROM token_spend WHERE token_id = ${created.token.id}`)
    const [open] = await query(podium2.databaseUrl, (sql) =>
      sql`SELECT count(*)::int AS n FROM token_reservations WHERE token_id = ${created.token.id}`)
    expect(open!["n"]).toBe(0)
    expect(Number(spend!["reserved"])).toBe(0) // exact: numeric, no float leftovers
    expect(spend!["unpriced_in_flight"]).toBe(0)
    return { ok: replies.filter((r) => r.status === 200).length, spent: Number(spend!["settled"]) }
  }

  it("a priced candidate and a tiny request without max_tokens: the output is capped, so the bound holds", async () => {
    const oneCall = (4096 * 20 + 100) / 1e6 // at most the default cap of output plus a small prompt
    const { ok, spent } = await scenario({ name: "p", platform: "Custom", url: billing.url(), auth_type: "none", input_price_per_m_tokens: 1, output_price_per_m_tokens: 20 }, 1)
    expect(spent).toBeLessThanOrEqual(1 + oneCall)
    expect(spent).toBeGreaterThan(1 - oneCall) // it did spend the budget
    expect(ok).toBeGreaterThan(10)
  })

  it("a candidate without prices whose upstream reports usage.cost runs one call at a time and stops at the limit", async () => {
    const { ok, spent } = await scenario({ name: "u", platform: "Custom", url: billing.url(), auth_type: "none", model_name: "reports-cost" }, 2)
    expect(spent).toBeLessThanOrEqual(2 + 0.5)
    expect(ok).toBe(4) // 0, 0.5, 1.0, 1.5 are below 2; the fourth call brings spend to 2
    expect(spent).toBe(2)
  })

  it("a router candidate without prices takes them from the router catalogue", async () => {
    const oneCall = (4096 * 20 + 100) / 1e6
    const { ok, spent } = await scenario({ name: "r", platform: "Router", model_name: "acme/listed", token: "router-key" }, 1, { input: "hi" })
    expect(spent).toBeLessThanOrEqual(1 + oneCall)
    // the upstream reports no cost: only the catalogue's prices make the calls count
    expect(spent).toBeGreaterThan(1 - oneCall)
    expect(ok).toBeGreaterThan(10)
  })
})
