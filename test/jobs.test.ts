import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { afterAll, beforeAll, expect, it } from "vitest"
import { InviteRepositoryPg } from "@podium/adapters-pg/access/InviteRepositoryPg"
import { BudgetLedgerPg } from "@podium/adapters-pg/access/BudgetLedgerPg"
import { IdGeneratorUuidV7 } from "@podium/adapters-node/IdGeneratorUuidV7"
import { expireInvites, pruneJobMessages, sweepReservations } from "@podium/server/Jobs"
import { client } from "./support/Client.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

let podium: Podium

beforeAll(async () => {
  podium = await startPodium()
})
afterAll(() => podium.stop())

const runJob = <A>(job: Effect.Effect<A, never, any>) =>
  Effect.runPromise(job.pipe(
    Effect.provide(Layer.mergeAll(InviteRepositoryPg.layer.pipe(Layer.provide(ChangeFeed.layer)), BudgetLedgerPg.layer.pipe(Layer.provide(IdGeneratorUuidV7.layer))).pipe(
      Layer.provideMerge(PgClient.layer({ url: Redacted.make(podium.databaseUrl) }))
    )),
    Effect.orDie
  ) as Effect.Effect<A>)

const snowflakeAt = (ms: number) => ((BigInt(ms - Date.UTC(2025, 0, 1)) << 22n) | 1n).toString()

it("the schedules are stored durably in Postgres", async () => {
  await expect.poll(async () => {
    const rows = await query(podium.databaseUrl, (sql) =>
      sql`SELECT DISTINCT entity_type FROM cluster_messages WHERE entity_type LIKE 'ClusterCron/%' ORDER BY 1`)
    return rows.map((r) => r["entity_type"])
  }, { timeout: 20_000, interval: 250 }).toEqual([
    "ClusterCron/consolidate-datasets",
    "ClusterCron/expire-invites",
    "ClusterCron/prune-job-messages",
    "ClusterCron/scheduled-fine-tunes",
    "ClusterCron/scheduled-runs",
    "ClusterCron/sweep-budget-reservations"
  ])
})

it("expiring invites marks only overdue pending ones", async () => {
  const owner = client(podium, await session("jobs-owner"))
  const { invite: due } = await owner((c) => c.invites.invite({ payload: { email: "due@example.com" } }))
  const { invite: fresh } = await owner((c) => c.invites.invite({ payload: { email: "fresh@example.com" } }))
  await query(podium.databaseUrl, (sql) =>
    sql`UPDATE invites SET expires_at = now() - interval '1 second' WHERE id = ${due.id}`)
  expect(await runJob(expireInvites)).toBe(1)
  expect(await runJob(expireInvites)).toBe(0)
  const rows = await query(podium.databaseUrl, (sql) => sql`SELECT id, status FROM invites ORDER BY email`)
  expect(rows).toEqual([
    { id: due.id, status: "expired" },
    { id: fresh.id, status: "pending" }
  ])
})

it("pruning deletes processed messages past the retention, with their replies, and nothing else", async () => {
  const old = Date.now() - 30 * 86_400_000
  const rows = [
    { id: snowflakeAt(old), processed: true },
    { id: snowflakeAt(old + 1), processed: false },
    { id: snowflakeAt(Date.now() - 60_000), processed: true }
  ]
  for (const row of rows) {
    await query(podium.databaseUrl, (sql) =>
      sql`INSERT INTO cluster_messages (id, shard_id, entity_type, entity_id, kind, tag, payload, processed, request_id)
          VALUES (${row.id}::bigint, 'test:1', 'Test', 'x', 0, 'run', '{}', ${row.processed}, ${row.id}::bigint)`)
    await query(podium.databaseUrl, (sql) =>
      sql`INSERT INTO cluster_replies (id, kind, request_id, payload) VALUES (${row.id}::bigint + 7, 0, ${row.id}::bigint, '{}')`)
  }
  expect(await runJob(pruneJobMessages)).toBe(1)
  const left = await query(podium.databaseUrl, (sql) =>
    sql`SELECT id::text AS id FROM cluster_messages WHERE entity_type = 'Test' ORDER BY id`)
  expect(left.map((r) => r["id"])).toEqual([rows[1]!.id, rows[2]!.id])
  const replies = await query(podium.databaseUrl, (sql) =>
    sql`SELECT request_id::text AS id FROM cluster_replies WHERE request_id IN (${rows[0]!.id}::bigint, ${rows[1]!.id}::bigint)`)
  expect(replies.map((r) => r["id"])).toEqual([rows[1]!.id])
})

it("sweeping releases reservations whose call never settled, and only those", async () => {
  const owner = client(podium, await session("jobs-budget"))
  const token = (await owner((c) =>
    c.tokens.create({ payload: { name: "b", budget_limit: 1, budget_reset_interval: "monthly" } })
  )).token.id
  await query(podium.databaseUrl, (sql) =>
    sql`INSERT INTO token_spend (token_id, window_start, settled_usd, reserved_usd)
        VALUES (${token}, date_trunc('month', now()), 0.2, 0.3)`)
  for (const [id, amount, expired] of [[crypto.randomUUID(), 0.1, false], [crypto.randomUUID(), 0.2, true]] as const) {
    await query(podium.databaseUrl, (sql) =>
      sql`INSERT INTO token_reservations (id, token_id, window_start, amount_usd, expires_at)
          VALUES (${id}, ${token}, date_trunc('month', now()), ${amount},
            now() + ${expired ? "-1 minute" : "5 minutes"}::interval)`)
  }
  expect(await runJob(sweepReservations)).toBe(1)
  const [spend] = await query(podium.databaseUrl, (sql) =>
    sql`SELECT settled_usd, reserved_usd FROM token_spend WHERE token_id = ${token}`)
  expect(Number(spend!["settled_usd"])).toBeCloseTo(0.2, 9)
  expect(Number(spend!["reserved_usd"])).toBeCloseTo(0.1, 9)
})
