import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { freshDatabaseUrl } from "./support/database.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

// Instances keep copies of the rows every call reads (API tokens, leaderboards with candidates,
// integrations) and drop them when Postgres announces a change on `podium_changes`.

let fake: OpenAiFake
const running: Array<Podium> = []
beforeAll(async () => {
  fake = await startOpenAiFake()
})
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()))
  await fake.close()
})

const start = async (databaseUrl?: string) => {
  const podium = await startPodium({ DATABASE_URL: databaseUrl })
  running.push(podium)
  return podium
}

/** A leaderboard serving a Custom candidate at `{fake}/{path}`, and an API token that may call it. */
const serving = async (podium: Podium, owner: string, path: string) => {
  const id = (await podium.request("POST", "/api/leaderboards", { token: owner, json: { name: "copies", dataset_type: "PUSH" } }))
    .body.leaderboard.id as string
  const candidate = await addCandidate(podium, owner, id, path)
  await podium.request("PATCH", `/api/leaderboards/${id}`, {
    token: owner,
    json: { chosen_model_strategy: "manual", chosen_leaderboard_model_id: candidate }
  })
  const token = (await podium.request("POST", "/api/tokens", {
    token: owner,
    json: { name: "copies", scopes: ["leaderboards:inference"] }
  })).body.secret as string
  return { id, candidate, token }
}
const addCandidate = async (podium: Podium, owner: string, id: string, path: string) =>
  (await podium.request("POST", `/api/leaderboards/${id}/models`, {
    token: owner,
    json: { name: path, platform: "Custom", url: `${fake.url}/${path}`, auth_type: "none" }
  })).body.model.id as string

/** Calls the leaderboard and says which upstream path answered (or the status when none did). */
const upstreamOf = async (podium: Podium, id: string, token: string) => {
  const before = fake.seen.length
  const reply = await podium.request("POST", `/v1/leaderboard/${id}/inference`, { token, json: { input: "hi" } })
  return reply.status === 200 ? fake.seen.slice(before).at(-1)!.path : `status ${reply.status}`
}

/** Changes a candidate's URL with triggers off, so no announcement is made: only a fresh read sees it. */
const silentlyMove = (podium: Podium, candidate: string, path: string) =>
  query(podium.databaseUrl, (sql) =>
    sql.withTransaction(Effect.andThen(
      sql`SET LOCAL session_replication_role = replica`,
      sql`UPDATE leaderboard_models SET url = ${`${fake.url}/${path}`} WHERE id = ${candidate} RETURNING id`
    )))

const listeners = async (databaseUrl: string) =>
  (await query(databaseUrl, (sql) =>
    sql`SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND query ILIKE 'LISTEN%podium_changes%'`)).map((r) => Number(r["pid"]))

describe("instance-local copies", () => {
  it("a call is served from the copy; an announcement of the change makes the instance read again", async () => {
    const podium = await start()
    const owner = await session("copies-owner")
    const { candidate, id, token } = await serving(podium, owner, "first/v1")
    await expect.poll(() => listeners(podium.databaseUrl), { timeout: 10_000 }).toHaveLength(1)
    expect(await upstreamOf(podium, id, token)).toBe("/first/v1/chat/completions")

    await silentlyMove(podium, candidate, "second/v1")
    expect(await upstreamOf(podium, id, token)).toBe("/first/v1/chat/completions") // the copy

    await query(podium.databaseUrl, (sql) => sql`SELECT pg_notify('podium_changes', ${`leaderboard:${id}`})`)
    await expect.poll(() => upstreamOf(podium, id, token), { timeout: 5_000, interval: 20 })
      .toBe("/second/v1/chat/completions")
  })

  it("changes made through one instance reach another: a new chosen candidate, a revoked token", async () => {
    const databaseUrl = await freshDatabaseUrl()
    const [first, second] = [await start(databaseUrl), await start(databaseUrl)]
    await expect.poll(() => listeners(databaseUrl), { timeout: 10_000 }).toHaveLength(2)
    const owner = await session("copies-two")
    const { id, token } = await serving(first, owner, "a/v1")
    expect(await upstreamOf(second, id, token)).toBe("/a/v1/chat/completions")

    const other = await addCandidate(first, owner, id, "b/v1")
    await first.request("PATCH", `/api/leaderboards/${id}`, { token: owner, json: { chosen_leaderboard_model_id: other } })
    expect(await upstreamOf(first, id, token)).toBe("/b/v1/chat/completions") // the writer's own copy: at once
    await expect.poll(() => upstreamOf(second, id, token), { timeout: 5_000, interval: 20 }).toBe("/b/v1/chat/completions")

    const tokenId = (await first.request("GET", "/api/tokens", { token: owner })).body.tokens
      .find((t: { name: string }) => t.name === "copies").id as string
    await first.request("POST", `/api/tokens/${tokenId}/revoke`, { token: owner })
    expect(await upstreamOf(first, id, token)).toBe("status 401")
    await expect.poll(() => upstreamOf(second, id, token), { timeout: 5_000, interval: 20 }).toBe("status 401")
  })

  it("an operator's SQL is announced by the database itself", async () => {
    const podium = await start()
    const owner = await session("copies-sql")
    const { candidate, id, token } = await serving(podium, owner, "before/v1")
    await expect.poll(() => listeners(podium.databaseUrl), { timeout: 10_000 }).toHaveLength(1)
    expect(await upstreamOf(podium, id, token)).toBe("/before/v1/chat/completions")
    await query(podium.databaseUrl, (sql) =>
      sql`UPDATE leaderboard_models SET url = ${`${fake.url}/after/v1`} WHERE id = ${candidate} RETURNING id`)
    await expect.poll(() => upstreamOf(podium, id, token), { timeout: 5_000, interval: 20 })
      .toBe("/after/v1/chat/completions")
  })

  it("when the listening connection drops, the instance listens again and starts without copies", async () => {
    const podium = await start()
    const owner = await session("copies-lost")
    const { candidate, id, token } = await serving(podium, owner, "old/v1")
    await expect.poll(() => listeners(podium.databaseUrl), { timeout: 10_000 }).toHaveLength(1)
    const [listener] = await listeners(podium.databaseUrl)
    expect(await upstreamOf(podium, id, token)).toBe("/old/v1/chat/completions")

    await query(podium.databaseUrl, (sql) => sql`SELECT pg_terminate_backend(${listener!})`)
    await expect.poll(async () => {
      const now = await listeners(podium.databaseUrl)
      return now.length === 1 && now[0] !== listener
    }, { timeout: 10_000, interval: 50 }).toBe(true)

    // No announcement: only an instance that dropped its copies on reconnecting sees this.
    await silentlyMove(podium, candidate, "new/v1")
    expect(await upstreamOf(podium, id, token)).toBe("/new/v1/chat/completions")
  })
})
