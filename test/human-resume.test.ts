import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, expect, it } from "vitest"
import type { CaseId } from "@podium/domain/human"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { completion } from "./fakes/OpenAiFake.ts"
import { aCandidate, aCase, aHumanLeaderboard, createCase, generate, humanLeaderboard } from "./support/Builders.ts"
import { type Caller, client } from "./support/Client.ts"
import { freshDatabaseUrl } from "./support/database.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

// A generation interrupted by a stop resumes on the next instance, without calling again the
// candidates whose responses were stored.

const calls = new Map<string, number>()
let slowHolds = true
const server: Server = createServer((req, res) => {
  req.resume()
  req.on("end", () => {
    const path = new URL(req.url ?? "/", "http://x").pathname
    calls.set(path, (calls.get(path) ?? 0) + 1)
    const answer = () => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(completion(`from ${path}`)))
    if (path.startsWith("/slow") && slowHolds) return setTimeout(answer, 30_000).unref()
    answer()
  })
})
const running: Array<Podium> = []
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()))
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})
const caseOn = (api: Caller, leaderboard_id: LeaderboardId, case_id: CaseId) =>
  api((c) => c.human.getCase({ params: { leaderboard_id, case_id } }))

it("a generation cut off by a stop is finished by the next instance, calling only the unanswered candidate again", async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const databaseUrl = await freshDatabaseUrl()
  const first = await startPodium({ DATABASE_URL: databaseUrl })
  running.push(first)
  const owner = await session("resume-owner")
  const onFirst = client(first, owner)
  const { id } = await humanLeaderboard(
    onFirst,
    ["fast-1", "fast-2", "slow"].map((path) => aCandidate(`${upstream}/${path}`, { name: path })),
    aHumanLeaderboard({ name: "resume" })
  )
  const caseId = (await createCase(onFirst, id, aCase({ input: "hi" }))).body.id
  const pending = generate(onFirst, id, caseId)
    .catch((error: unknown) => error) // the instance stops under it
  const stored = async () =>
    (await query(databaseUrl, (sql) => sql`SELECT count(*)::int AS n FROM human_responses WHERE case_id = ${caseId}`))[0]!["n"]
  await expect.poll(stored, { timeout: 10_000, interval: 50 }).toBe(2)
  await expect.poll(() => calls.get("/slow/chat/completions") ?? 0, { timeout: 10_000 }).toBe(1)

  await first.stop() // waits out the cluster's 15 s entity drain, then interrupts the slow call
  running.splice(running.indexOf(first), 1)
  await pending
  slowHolds = false
  const second = await startPodium({ DATABASE_URL: databaseUrl })
  running.push(second)

  const onSecond = client(second, owner)
  await expect.poll(async () => (await caseOn(onSecond, id, caseId)).status, {
    timeout: 30_000,
    interval: 250
  }).toBe("generated")
  const done = await caseOn(onSecond, id, caseId)
  expect(done.responses.map((r) => r.status)).toEqual(["succeeded", "succeeded", "succeeded"])
  expect(Object.fromEntries(calls)).toEqual({
    "/fast-1/chat/completions": 1,
    "/fast-2/chat/completions": 1,
    "/slow/chat/completions": 2
  })
}, 90_000)
