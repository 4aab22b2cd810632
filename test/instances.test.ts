import { afterAll, expect, it } from "vitest"
import { client } from "./support/Client.ts"
import { freshDatabaseUrl } from "./support/database.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

const running: Array<Podium> = []
afterAll(() => Promise.all(running.map((p) => p.stop())))

/** Shard leases: the cluster's advisory locks, per backend pid. */
const leases = async (databaseUrl: string) => {
  const rows = await query(databaseUrl, (sql) =>
    sql`SELECT pid, count(*)::int AS shards FROM pg_locks
        WHERE locktype = 'advisory' AND granted AND objsubid = 2
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
        GROUP BY pid`)
  return rows.map((r) => ({ pid: Number(r["pid"]), shards: Number(r["shards"]) }))
}
const total = (rows: ReadonlyArray<{ shards: number }>) => rows.reduce((sum, r) => sum + r.shards, 0)

it("two instances share one database: both serve, shards are leased once, and the survivor takes over", async () => {
  const databaseUrl = await freshDatabaseUrl()
  const first = await startPodium({ DATABASE_URL: databaseUrl })
  running.push(first)
  await expect.poll(async () => total(await leases(databaseUrl)), { timeout: 20_000, interval: 200 }).toBeGreaterThan(0)
  const shards = total(await leases(databaseUrl))

  const second = await startPodium({ DATABASE_URL: databaseUrl })
  running.push(second)
  const token = await session("instances-user")
  const viaFirst = await client(first, token)((c) => c.tokens.list({ query: {} }))
  const viaSecond = await client(second, token)((c) => c.tokens.list({ query: {} }))
  expect(viaSecond.business_id).toBe(viaFirst.business_id)
  expect(total(await leases(databaseUrl))).toBe(shards)

  const before = await leases(databaseUrl)
  await first.stop()
  running.splice(running.indexOf(first), 1)
  await expect.poll(async () => {
    const after = await leases(databaseUrl)
    return { total: total(after), fromOldHolders: after.filter((r) => before.some((b) => b.pid === r.pid && b.shards === shards)).length }
  }, { timeout: 30_000, interval: 250 }).toEqual({ total: shards, fromOldHolders: 0 })
  expect(await client(second)((c) => c.health.check())).toMatchObject({ ok: true })
}, 60_000)
