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

  it("a call estimated to cost nothing is never blocked, even on a zero budget", async () => {
    const id = await servedLeaderboard({})
    const { secret, token } = await budgetToken(0)
    for (let i = 0; i < 3; i++) expect((await infer(id, secret)).status).toBe(200)
    expect(await ledger(token.id)).toMatchObject({ reserved: 0, open: 0 })
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
