import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { aCandidate, aLeaderboard, apiToken, servingLeaderboard, signedIn } from "./support/Builders.ts"
import { client } from "./support/Client.ts"
import { type Podium, startPodium } from "./support/Podium.ts"
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
    const owner = await signedIn(podium, "poison-owner")
    const servingToken = await apiToken(owner.api, ["leaderboards:inference"], { name: "serving" })
    const serving = client(podium, servingToken)
    const { id } = await servingLeaderboard(owner.api, aCandidate(fake.url, { name: "local" }), aLeaderboard({ name: "poison" }))
    const infer = (input: string) => serving((c) => c.inference.infer({ params: { leaderboard_id: id }, payload: { input } }))

    fake.mode = "poison"
    // The answer byte for byte, escapes included: the wire itself.
    const poisoned = await podium.request("POST", `/v1/leaderboard/${id}/inference`, { token: servingToken, json: { input: "first" } })
    expect(poisoned.status).toBe(200)
    expect(poisoned.text).toBe(fake.sent.at(-1))
    expect(poisoned.body.choices[0].message.content).toBe("poison: \u0000 \ud800 first")

    fake.mode = "ok"
    const later = await Promise.all(Array.from({ length: 200 }, (_, i) => infer(`call ${i}`)))
    expect(later).toHaveLength(200) // each call succeeded: a failure rejects

    const count = async () =>
      (await query(podium.databaseUrl, (sql) =>
        sql<{ n: number }>`SELECT count(*)::int AS n FROM traces WHERE leaderboard_id = ${id}`))[0]!.n
    await expect.poll(count, { timeout: 10_000, interval: 50 }).toBe(201)
    const [stored] = await query(podium.databaseUrl, (sql) =>
      sql<{ output: string }>`SELECT output FROM traces WHERE leaderboard_id = ${id} AND input = 'first'`)
    expect(stored!.output).toBe("poison: \uFFFD \uFFFD first")
  })
})
