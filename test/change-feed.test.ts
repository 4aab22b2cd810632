import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { aCandidate, aLeaderboard, apiToken, servingLeaderboard } from "./support/Builders.ts"
import { type ApiFailure, type Caller, client } from "./support/Client.ts"
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
const serving = async (api: Caller, path: string) => {
  const { id, candidate } = await servingLeaderboard(api, upstream(path), aLeaderboard({ name: "copies" }))
  const token = await apiToken(api, ["leaderboards:inference"], { name: "copies" })
  return { id, candidate, token }
}
const upstream = (path: string) => aCandidate(`${fake.url}/${path}`, { name: path })

/** Calls the leaderboard and says which upstream path answered (or the status when none did). */
const upstreamOf = (api: Caller, leaderboard_id: LeaderboardId) => {
  const before = fake.seen.length
  return api((c) => c.inference.infer({ params: { leaderboard_id }, payload: { input: "hi" } })).then(
    () => fake.seen.slice(before).at(-1)!.path,
    (failure: ApiFailure) => `status ${failure.status}`
  )
}

/** Changes a candidate's URL with triggers off, so no announcement is made: only a fresh read sees it. */
const silentlyMove = (podium: Podium, candidate: string, path: string) =>
  query(podium.databaseUrl, (sql) =>
    sql.withTransaction(Effect.andThen(
      sql`SET LOCAL session_replication_role = replica`,
      sql`UPDATE leaderboard_models SET url = ${`${fake.url}/${path}`} WHERE id = ${candidate} RETURNING id`
    )))

/**
 * Waits until `podium` has handled every announcement committed so far. Announcements reach an
 * instance in commit order and are handled in order, so once a marker announced now has reached
 * its copy of a leaderboard, every earlier one has too.
 */
const settled = async (podium: Podium, owner: Caller) => {
  const { candidate, id, token } = await serving(owner, "marker/v1")
  const caller = client(podium, token)
  expect(await upstreamOf(caller, id)).toBe("/marker/v1/chat/completions")
  await silentlyMove(podium, candidate, "marker/v2")
  await query(podium.databaseUrl, (sql) => sql`SELECT pg_notify('podium_changes', ${`leaderboard:${id}`})`)
  await expect.poll(() => upstreamOf(caller, id), { timeout: 5_000, interval: 20 }).toBe("/marker/v2/chat/completions")
}

const listeners = async (databaseUrl: string) =>
  (await query(databaseUrl, (sql) =>
    sql`SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND query ILIKE 'LISTEN%podium_changes%'`)).map((r) => Number(r["pid"]))

describe("instance-local copies", () => {
  it("a call is served from the copy; an announcement of the change makes the instance read again", async () => {
    const podium = await start()
    const owner = client(podium, await session("copies-owner"))
    const { candidate, id, token } = await serving(owner, "first/v1")
    const caller = client(podium, token)
    await expect.poll(() => listeners(podium.databaseUrl), { timeout: 10_000 }).toHaveLength(1)
    expect(await upstreamOf(caller, id)).toBe("/first/v1/chat/completions")

    await silentlyMove(podium, candidate, "second/v1")
    expect(await upstreamOf(caller, id)).toBe("/first/v1/chat/completions") // the copy

    await query(podium.databaseUrl, (sql) => sql`SELECT pg_notify('podium_changes', ${`leaderboard:${id}`})`)
    await expect.poll(() => upstreamOf(caller, id), { timeout: 5_000, interval: 20 })
      .toBe("/second/v1/chat/completions")
  })

  it("changes made through one instance reach another: a new chosen candidate, a revoked token", async () => {
    const databaseUrl = await freshDatabaseUrl()
    const [first, second] = [await start(databaseUrl), await start(databaseUrl)]
    await expect.poll(() => listeners(databaseUrl), { timeout: 10_000 }).toHaveLength(2)
    const owner = client(first, await session("copies-two"))
    const { id, token } = await serving(owner, "a/v1")
    const [viaFirst, viaSecond] = [client(first, token), client(second, token)]
    expect(await upstreamOf(viaSecond, id)).toBe("/a/v1/chat/completions")

    const other = (await owner((c) => c.leaderboards.addModel({ params: { leaderboard_id: id }, payload: upstream("b/v1") })))
      .model.id
    await owner((c) => c.leaderboards.update({ params: { leaderboard_id: id }, payload: { chosen_leaderboard_model_id: other } }))
    expect(await upstreamOf(viaFirst, id)).toBe("/b/v1/chat/completions") // the writer's own copy: at once
    await expect.poll(() => upstreamOf(viaSecond, id), { timeout: 5_000, interval: 20 }).toBe("/b/v1/chat/completions")

    const { tokens } = await owner((c) => c.tokens.list({ query: {} }))
    const tokenId = tokens.find((t) => t.name === "copies")!.id
    await owner((c) => c.tokens.revoke({ params: { token_id: tokenId } }))
    expect(await upstreamOf(viaFirst, id)).toBe("status 401")
    await expect.poll(() => upstreamOf(viaSecond, id), { timeout: 5_000, interval: 20 }).toBe("status 401")
  })

  it("sessions are served from copies; invites, memberships and removals made on one instance reach another", async () => {
    const databaseUrl = await freshDatabaseUrl()
    const [first, second] = [await start(databaseUrl), await start(databaseUrl)]
    await expect.poll(() => listeners(databaseUrl), { timeout: 10_000 }).toHaveLength(2)
    const owner = client(first, await session("copies-team-owner"))
    const business_id = (await owner((c) => c.invites.list({ query: {} }))).business_id
    // the invitee signs in on the second instance first: its user, memberships and (no) invites are copied there
    const invitee = client(second, await session("copies-invitee", { email: "copies.invitee@example.com", emailVerified: true }))
    const workspacesOf = async () =>
      (await invitee((c) => c.leaderboards.list({ query: { business_id } })).then(() => "member", (f: ApiFailure) => `status ${f.status}`))
    const outside = await workspacesOf()
    expect(outside).not.toBe("member")
    // the invite is made on the first instance; the second accepts it on the invitee's next request
    await owner((c) => c.invites.invite({ payload: { email: "Copies.Invitee@example.com", business_id } }))
    await expect.poll(workspacesOf, { timeout: 5_000, interval: 20 }).toBe("member")
    // from then on the second answers from its copy: a membership deleted without an announcement
    // still counts there, until the announcement comes (once the acceptance's own announcement,
    // which drops the copy, has come and gone)
    await settled(second, owner)
    expect(await workspacesOf()).toBe("member")
    const { members } = await owner((c) => c.invites.list({ query: { business_id } }))
    const user_id = members.find((m) => m.email === "copies.invitee@example.com")!.user_id
    await query(databaseUrl, (sql) =>
      sql.withTransaction(Effect.andThen(
        sql`SET LOCAL session_replication_role = replica`,
        sql`DELETE FROM memberships WHERE workspace_id = ${business_id} AND user_id = ${user_id} RETURNING user_id`
      )))
    expect(await workspacesOf()).toBe("member")
    await query(databaseUrl, (sql) => sql`SELECT pg_notify('podium_changes', ${`membership:${user_id}`})`)
    await expect.poll(workspacesOf, { timeout: 5_000, interval: 20 }).toBe(outside)
    // invited again and accepted again, then
    await owner((c) => c.invites.invite({ payload: { email: "copies.invitee@example.com", business_id } }))
    await expect.poll(workspacesOf, { timeout: 5_000, interval: 20 }).toBe("member")
    // removed on the first instance: the second stops letting the invitee in
    await owner((c) => c.invites.remove({ payload: { business_id, user_id } }))
    await expect.poll(workspacesOf, { timeout: 5_000, interval: 20 }).toBe(outside)
  })

  it("an operator's SQL is announced by the database itself", async () => {
    const podium = await start()
    const owner = client(podium, await session("copies-sql"))
    const { candidate, id, token } = await serving(owner, "before/v1")
    const caller = client(podium, token)
    await expect.poll(() => listeners(podium.databaseUrl), { timeout: 10_000 }).toHaveLength(1)
    expect(await upstreamOf(caller, id)).toBe("/before/v1/chat/completions")
    await query(podium.databaseUrl, (sql) =>
      sql`UPDATE leaderboard_models SET url = ${`${fake.url}/after/v1`} WHERE id = ${candidate} RETURNING id`)
    await expect.poll(() => upstreamOf(caller, id), { timeout: 5_000, interval: 20 })
      .toBe("/after/v1/chat/completions")
  })

  it("when the listening connection drops, the instance listens again and starts without copies", async () => {
    const podium = await start()
    const owner = client(podium, await session("copies-lost"))
    const { candidate, id, token } = await serving(owner, "old/v1")
    const caller = client(podium, token)
    await expect.poll(() => listeners(podium.databaseUrl), { timeout: 10_000 }).toHaveLength(1)
    const [listener] = await listeners(podium.databaseUrl)
    expect(await upstreamOf(caller, id)).toBe("/old/v1/chat/completions")

    await query(podium.databaseUrl, (sql) => sql`SELECT pg_terminate_backend(${listener!})`)
    await expect.poll(async () => {
      const now = await listeners(podium.databaseUrl)
      return now.length === 1 && now[0] !== listener
    }, { timeout: 10_000, interval: 50 }).toBe(true)

    // No announcement: only an instance that dropped its copies on reconnecting sees this.
    await silentlyMove(podium, candidate, "new/v1")
    expect(await upstreamOf(caller, id)).toBe("/new/v1/chat/completions")
  })
})
