import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

let fake: OpenAiFake
let podium: Podium

beforeAll(async () => {
  fake = await startOpenAiFake()
  podium = await startPodium({})
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

describe("an answer Postgres cannot store", () => {
  it("reaches the client unchanged, is traced with U+FFFD, and holds no later trace", async () => {
    const owner = await session("poison-owner")
    const serving = (await podium.request("POST", "/api/tokens", {
      token: owner,
      json: { name: "serving", scopes: ["leaderboards:inference"] }
    })).body.secret
    const id = (await podium.request("POST", "/api/leaderboards", {
      token: owner,
      json: { name: "poison", dataset_type: "PUSH" }
    })).body.leaderboard.id
    const candidate = (await podium.request("POST", `/api/leaderboards/${id}/models`, {
      token: owner,
      json: { name: "local", platform: "Custom", url: fake.url }
    })).body.model.id
    await podium.request("PATCH", `/api/leaderboards/${id}`, {
      token: owner,
      json: { chosen_model_strategy: "manual", chosen_leaderboard_model_id: candidate }
    })
    const infer = (input: string) =>
      podium.request("POST", `/v1/leaderboard/${id}/inference`, { token: serving, json: { input } })

    fake.mode = "poison"
    const poisoned = await infer("first")
    expect(poisoned.status).toBe(200)
    expect(poisoned.text).toBe(fake.sent.at(-1)) // byte for byte, escapes included
    expect(poisoned.body.choices[0].message.content).toBe("poison: \u0000 \ud800 first")

    fake.mode = "ok"
    const later = await Promise.all(Array.from({ length: 200 }, (_, i) => infer(`call ${i}`)))
    expect(later.every((r) => r.status === 200)).toBe(true)

    const count = async () =>
      (await query(podium.databaseUrl, (sql) =>
        sql<{ n: number }>`SELECT count(*)::int AS n FROM traces WHERE leaderboard_id = ${id}`))[0]!.n
    await expect.poll(count, { timeout: 10_000, interval: 50 }).toBe(201)
    const [stored] = await query(podium.databaseUrl, (sql) =>
      sql<{ output: string }>`SELECT output FROM traces WHERE leaderboard_id = ${id} AND input = 'first'`)
    expect(stored!.output).toBe("poison: \uFFFD \uFFFD first")
  })
})
