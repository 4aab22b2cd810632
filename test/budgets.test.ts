import { DateTime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import type { InferenceRequest } from "@podium/adapters-http/inference/InferenceApi"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { type FineTuneFake, startFineTuneFake } from "./fakes/FineTuneFake.ts"
import { loopbackFake } from "./fakes/JsonFake.ts"
import {
  aCandidate,
  aLeaderboard,
  aToken,
  type NewCandidate,
  type NewToken,
  servingLeaderboard,
  type SignedIn,
  signedIn
} from "./support/Builders.ts"
import { ApiFailure, type Caller, client, expectError } from "./support/Client.ts"
import { deployedModel } from "./support/Models.ts"
import { type Podium, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

let fake: OpenAiFake
let podium: Podium
let owner: SignedIn

beforeAll(async () => {
  fake = await startOpenAiFake()
  podium = await startPodium()
  owner = await signedIn(podium, "budget-owner")
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

/** A leaderboard served by a Custom candidate at the fake; each call costs 500 output tokens at `outputPrice`. */
const servedLeaderboard = async (prices: { input?: number; output?: number }) =>
  (await servingLeaderboard(
    owner.api,
    aCandidate(fake.url, {
      name: "priced",
      ...(prices.input === undefined ? {} : { input_price_per_m_tokens: prices.input }),
      ...(prices.output === undefined ? {} : { output_price_per_m_tokens: prices.output })
    }),
    aLeaderboard({ name: "b" })
  )).id
/** A new inference token of `who` on `on` (a budget as `overrides` say) and a client acting with it. */
const inferenceToken = async (who: SignedIn, overrides: Partial<NewToken>, on: Podium = podium) => {
  const { secret, token } = await who.api((c) => c.tokens.create({ payload: aToken(["leaderboards:inference"], overrides) }))
  return { token, api: client(on, secret) }
}
const budgetToken = (limit: number) =>
  inferenceToken(owner, { name: "budgeted", budget_limit: limit, budget_reset_interval: "daily" })
const infer = (leaderboard_id: LeaderboardId, api: Caller, payload: typeof InferenceRequest.Type = { input: "hi", max_tokens: 500 }) =>
  api((c) => c.inference.infer({ params: { leaderboard_id }, payload }))
/** `n` calls at once: how many succeeded, and why the others failed. */
const together = async (n: number, call: () => Promise<unknown>) => {
  const settled = await Promise.allSettled(Array.from({ length: n }, call))
  const refused = settled.flatMap((s) => s.status === "rejected" ? [s.reason as unknown] : [])
  for (const failure of refused) expect(failure).toBeInstanceOf(ApiFailure)
  return { ok: settled.length - refused.length, refused: refused as Array<ApiFailure> }
}
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
    const { api, token } = await budgetToken(0.095)
    const { ok, refused } = await together(50, () => infer(id, api))
    for (const r of refused) expect(r.status, r.text).toBe(429)
    expect(ok + refused.length).toBe(50)
    expect(ok).toBe(10)
    expect(refused[0]!.error).toMatchObject({ code: "budget_exceeded", details: { budget_limit: 0.095 } })
    const retryAfter = Number(refused[0]!.headers["retry-after"])
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(86_400)
    const after = await ledger(token.id)
    expect(after.open).toBe(0)
    expect(after.reserved).toBeCloseTo(0, 9)
    expect(after.settled).toBeCloseTo(0.1, 9)
    expect(after.settled).toBeLessThanOrEqual(0.095 + 0.01 + 1e-9)
    expect(fake.seen.filter((s) => s.path === "/chat/completions").length).toBeGreaterThanOrEqual(10)
  })

  it("the token list shows the period's exact spend; a changed limit keeps it, a changed period carries it over", async () => {
    // Each call costs 0.01 (500 output tokens at 20 per million).
    const id = await servedLeaderboard({ input: 0, output: 20 })
    const { api, token } = await budgetToken(0.035)
    for (let i = 0; i < 3; i++) await infer(id, api)
    const shown = async () => (await owner.api((c) => c.tokens.list({ query: {} }))).tokens.find((t) => t.id === token.id)!
    const today = DateTime.startOf(DateTime.nowUnsafe(), "day")
    const spent = await shown()
    // 0.035 - 0.03 is 0.0050000000000000044 in floating point: the answer is exact
    expect(spent).toMatchObject({ budget_spent_usd: "0.03", budget_reserved_usd: "0", budget_remaining_usd: "0.005" })
    expect(DateTime.formatIso(spent.budget_period_start!)).toBe(DateTime.formatIso(today))
    expect(DateTime.formatIso(spent.budget_resets_at!)).toBe(DateTime.formatIso(DateTime.add(today, { days: 1 })))

    const update = (payload: { budget_limit?: number; budget_reset_interval?: "monthly" }) =>
      owner.api((c) => c.tokens.update({ params: { token_id: token.id }, payload }))
    const lowered = (await update({ budget_limit: 0.02 })).token
    expect(lowered).toMatchObject({ budget_limit: 0.02, budget_spent_usd: "0.03", budget_remaining_usd: "0" })
    await expectError(infer(id, api), 429, "budget_exceeded", "below what was spent")

    const month = DateTime.startOf(DateTime.nowUnsafe(), "month")
    const monthly = (await update({ budget_reset_interval: "monthly" })).token
    expect(monthly).toMatchObject({ budget_reset_interval: "monthly", budget_spent_usd: "0.03", budget_remaining_usd: "0" })
    expect(DateTime.formatIso(monthly.budget_period_start!)).toBe(DateTime.formatIso(month))
    expect(DateTime.formatIso(monthly.budget_resets_at!)).toBe(DateTime.formatIso(DateTime.add(month, { months: 1 })))
    await expectError(infer(id, api), 429, "budget_exceeded", "the spend came along")

    const raised = (await update({ budget_limit: 0.05 })).token
    expect(raised).toMatchObject({ budget_spent_usd: "0.03", budget_remaining_usd: "0.02" })
    await infer(id, api)
    expect(await shown()).toMatchObject({ budget_spent_usd: "0.04", budget_reserved_usd: "0", budget_remaining_usd: "0.01" })
    const rows = await query(podium.databaseUrl, (sql) =>
      sql`SELECT window_start, settled_usd::text AS settled FROM token_spend WHERE token_id = ${token.id}`)
    expect(rows.map((r) => [(r["window_start"] as Date).toISOString(), r["settled"]])).toEqual([
      [DateTime.formatIso(month), "0.04"]
    ])
  })

  it("a failed call releases its reservation and costs nothing", async () => {
    const id = await servedLeaderboard({ input: 0, output: 20 })
    const { api, token } = await budgetToken(1)
    fake.mode = "error"
    await expectError(infer(id, api), 502, "upstream_error").finally(() => fake.mode = "ok")
    expect(await ledger(token.id)).toEqual({ settled: 0, reserved: 0, open: 0 })
  })

  it("a zero budget refuses every call, priced or not", async () => {
    for (const prices of [{}, { input: 0, output: 20 }]) {
      const id = await servedLeaderboard(prices)
      const { api, token } = await budgetToken(0)
      await expectError(infer(id, api), 429, "budget_exceeded", JSON.stringify(prices))
      expect(await ledger(token.id)).toMatchObject({ reserved: 0, open: 0 })
    }
  })

  it("tokens without a budget are not metered", async () => {
    const id = await servedLeaderboard({ input: 0, output: 20 })
    const plain = await inferenceToken(owner, { name: "plain" })
    await infer(id, plain.api)
    const rows = await query(podium.databaseUrl, (sql) => sql`SELECT * FROM token_spend WHERE token_id = ${plain.token.id}`)
    expect(rows).toHaveLength(0)
  })
})

/**
 * An upstream that bills what a real one would: prompt tokens at most the UTF-8 bytes sent, and as
 * many output tokens as it is allowed (100,000 when the call sets no max_tokens). The model name
 * picks how it bills: `reports-cost` reports a cost of 0.5 and `bills-9` one of 9 (`usage.cost`),
 * `ignores-max-tokens` bills 1,000,000 output tokens whatever the call allowed, `reports-nothing`
 * answers without usage. `/router/models` is
 * the router's price catalogue. Each answer is held a moment, so calls let run side by side overlap.
 */
const routerPrices = { prompt: "0.000001", completion: "0.00002" } // $1 and $20 per million tokens
const load = { inFlight: 0, max: 0 }
const billing = loopbackFake(async (path, body) => {
  if (path === "/router/models") {
    return { data: [{ id: "acme/listed", pricing: routerPrices }, { id: "acme/free-text", pricing: { prompt: "n/a" } }] }
  }
  load.max = Math.max(load.max, ++load.inFlight)
  // the honest candidate's calls take long enough that, once trusted, two of them meet in flight
  // even when a busy machine spaces out the waiting calls' retries (at 5 ms they sometimes did not)
  await new Promise((resolve) => setTimeout(resolve, body.model === "honest" ? 50 : 5))
  load.inFlight--
  const prompt = (body.messages as Array<{ content: string }>).reduce((n, m) => n + Buffer.byteLength(m.content), 0)
  const completion = body.model === "ignores-max-tokens" ? 1_000_000 : Math.min(body.max_tokens ?? 100_000, 100_000)
  const usage: Record<string, number> = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }
  if (body.model === "reports-cost") usage.cost = 0.5
  if (body.model === "bills-9") usage.cost = 9
  const answer = { id: "x", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "ok" } }] }
  return body.model === "reports-nothing" ? answer : { ...answer, usage }
})

describe("spend never exceeds the limit by more than one call's cost (50 parallel calls each)", () => {
  const fineTuneKey = "sk-ft-budgets"
  let tuner: FineTuneFake
  let podium2: Podium
  let owner2: SignedIn
  beforeAll(async () => {
    await billing.start()
    tuner = await startFineTuneFake({ apiKey: fineTuneKey })
    podium2 = await startPodium({
      ROUTER_BASE_URL: `${billing.url()}/router`,
      FINE_TUNE_BASE_URL: tuner.baseUrl,
      FINE_TUNE_API_KEY: fineTuneKey,
      FINE_TUNE_BASE_MODELS: "base-model",
      FINE_TUNE_POLL_INTERVAL_MS: "50"
    })
    owner2 = await signedIn(podium2, "budget-scenarios")
  })
  afterAll(async () => {
    await podium2.stop()
    await billing.stop()
    await tuner.close()
  })

  /**
   * What a token's calls settled at once every call is answered: its spend, and the most one of
   * its calls cost (from the traces). Nothing may be left reserved.
   */
  const settledSpend = async (tokenId: string) => {
    const [spend] = await query(podium2.databaseUrl, (sql) =>
      sql`SELECT settled_usd::text AS settled, reserved_usd::text AS reserved, unpriced_in_flight
          FROM token_spend WHERE token_id = ${tokenId}`)
    const [open] = await query(podium2.databaseUrl, (sql) =>
      sql`SELECT count(*)::int AS n FROM token_reservations WHERE token_id = ${tokenId}`)
    const [largest] = await query(podium2.databaseUrl, (sql) =>
      sql`SELECT coalesce(max(cost_usd), 0) AS usd FROM traces WHERE token_id = ${tokenId}`)
    expect(open!["n"]).toBe(0)
    expect(Number(spend!["reserved"])).toBe(0) // exact: numeric, no float leftovers
    expect(spend!["unpriced_in_flight"]).toBe(0)
    return { spent: Number(spend!["settled"]), largest: Number(largest!["usd"]) }
  }

  /**
   * 50 parallel calls of a new token with a budget of `limit` on a leaderboard served by `candidate`;
   * `charged` is what one call is charged when its trace knows no cost.
   */
  const scenario = async (
    candidate: NewCandidate,
    limit: number,
    payload: typeof InferenceRequest.Type = { input: "hi" },
    charged = 0
  ) => {
    const { id } = await servingLeaderboard(owner2.api, candidate, aLeaderboard({ name: "s" }))
    const { token, api: serving } = await inferenceToken(owner2, { name: "b", budget_limit: limit }, podium2)
    load.max = 0
    const { ok, refused } = await together(50, () => infer(id, serving, payload))
    for (const r of refused) expect(r.status, r.text).toBe(429)
    const { largest, spent } = await settledSpend(token.id)
    expect(spent).toBeLessThanOrEqual(limit + Math.max(largest, charged))
    return { ok, spent, largest, overlap: load.max }
  }
  const custom = (model_name: string, prices: Partial<NewCandidate> = {}): NewCandidate => ({
    name: model_name,
    platform: "Custom",
    url: billing.url(),
    auth_type: "none",
    model_name,
    ...prices
  })

  it("a priced candidate and a tiny request without max_tokens: the output is capped, so the bound holds", async () => {
    const oneCall = (4096 * 20 + 100) / 1e6 // at most the default cap of output plus a small prompt
    const { ok, overlap, spent } = await scenario(custom("honest", { input_price_per_m_tokens: 1, output_price_per_m_tokens: 20 }), 1)
    expect(spent).toBeLessThanOrEqual(1 + oneCall)
    expect(spent).toBeGreaterThan(1 - oneCall) // it did spend the budget
    expect(ok).toBeGreaterThan(10)
    // its calls settle within their reservations, so once one has, they run side by side
    expect(overlap).toBeGreaterThan(1)
  })

  it("a candidate without prices whose upstream reports usage.cost runs one call at a time and stops at the limit", async () => {
    const { ok, overlap, spent } = await scenario(custom("reports-cost"), 2)
    expect(ok).toBe(4) // 0, 0.5, 1.0, 1.5 are below 2; the fourth call brings spend to 2
    expect(spent).toBe(2)
    expect(overlap).toBe(1)
  })

  it("a candidate priced at $0.01 per million tokens whose upstream reports usage.cost 9: one call at a time once it settles above its reservation", async () => {
    const priced = { input_price_per_m_tokens: 0.01, output_price_per_m_tokens: 0.01 }
    const { largest, ok, spent } = await scenario(custom("bills-9", priced), 10, { input: "hi", max_tokens: 1 })
    expect(largest).toBe(9)
    expect(ok).toBe(2) // 0 and 9 are below 10
    expect(spent).toBe(18)
  })

  it("a priced candidate whose upstream bills 1,000,000 output tokens against max_tokens 1: one call at a time", async () => {
    const priced = { input_price_per_m_tokens: 0.01, output_price_per_m_tokens: 9.8 }
    const { largest, ok, spent } = await scenario(custom("ignores-max-tokens", priced), 10, { input: "hi", max_tokens: 1 })
    expect(largest).toBeGreaterThan(9.8)
    expect(ok).toBe(2)
    expect(spent).toBe(2 * largest)
  })

  it("a priced candidate whose upstream reports no usage: each call is charged its reservation, the most it may have cost", async () => {
    const priced = { input_price_per_m_tokens: 1, output_price_per_m_tokens: 1_000_000 } // $1 per output token
    const oneCall = 4 + (2 + 4 + 16) / 1e6 // 4 output tokens, "hi" and "user" and the message allowance
    const { ok, spent } = await scenario(custom("reports-nothing", priced), 10, { input: "hi", max_tokens: 4 }, oneCall)
    expect(ok).toBe(3) // 0, 4 and 8 are below 10 whether the calls overlap or not
    expect(spent).toBeCloseTo(3 * oneCall, 9)
  })

  it("a router candidate without prices takes them from the router catalogue", async () => {
    const oneCall = (4096 * 20 + 100) / 1e6
    const { ok, spent } = await scenario({ name: "r", platform: "Router", model_name: "acme/listed", token: "router-key" }, 1, { input: "hi" })
    expect(spent).toBeLessThanOrEqual(1 + oneCall)
    // the upstream reports no cost: only the catalogue's prices make the calls count
    expect(spent).toBeGreaterThan(1 - oneCall)
    expect(ok).toBeGreaterThan(10)
  })

  it("model inference: a deployed model whose upstream reports usage.cost runs one call at a time and stops at the limit", async () => {
    const { modelId } = await deployedModel(podium2, owner2)
    const { secret, token } = await owner2.api((c) =>
      c.tokens.create({ payload: aToken(["models:inference"], { name: "model budget", budget_limit: 2 }) }))
    tuner.usageCost = 0.5
    const answers = await Promise.all(Array.from({ length: 50 }, () =>
      podium2.request("POST", `/v1/models/${modelId}/inference`, { token: secret, json: { messages: [{ role: "user", content: "q1" }] } })))
    tuner.usageCost = null
    for (const a of answers) expect([200, 429], JSON.stringify(a.body)).toContain(a.status)
    expect(answers.filter((a) => a.status === 200)).toHaveLength(4)
    const { largest, spent } = await settledSpend(token.id)
    expect(largest).toBe(0.5)
    expect(spent).toBe(2)
  })
})
