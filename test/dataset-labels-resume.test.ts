/**
 * An auto-labels job survives kill -9: `podium serve` runs as a child process labelling through a
 * slow loopback labeller, is killed with SIGKILL mid-job and started again on the same database,
 * and the job carries on from the page it was on instead of asking for every row again.
 */
import { randomBytes } from "node:crypto"
import { afterAll, describe, expect, it } from "vitest"
import { labelConcurrency, labelPageSize } from "@podium/domain/datasets"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { type LabellerFake, startLabellerFake } from "./fakes/LabellerFake.ts"
import { aCandidate, servingLeaderboard, signedIn } from "./support/Builders.ts"
import type { Caller } from "./support/Client.ts"
import { at, serveChild, stopChildren } from "./support/ChildPodium.ts"
import { freshDatabaseUrl } from "./support/database.ts"
import { sessionSecret } from "./support/Podium.ts"

let labeller: LabellerFake | undefined
afterAll(async () => {
  stopChildren()
  await labeller?.close()
})

const labelling = async (api: Caller, leaderboard_id: LeaderboardId) =>
  (await api((c) => c.pushDatasets.status({ params: { leaderboard_id } }))).labelling

/** 200 rows without a reference, with a row that has one after every 20th. */
const unlabelled = Array.from({ length: 200 }, (_, i) => ({ input: `row ${i}?` }))
const given = Array.from({ length: 10 }, (_, i) => ({ input: `given ${i}?`, expected: `given answer ${i}` }))
const rows = unlabelled.flatMap((row, i) => i % 20 === 19 ? [row, given[(i - 19) / 20]!] : [row])

describe("kill -9 during auto-labels", () => {
  it("resumes on restart, asking again only for rows of the page that was cut short", async () => {
    labeller = await startLabellerFake({ delayMs: 50 })
    const env = {
      DATABASE_URL: await freshDatabaseUrl(),
      SESSION_JWT_SECRET: sessionSecret,
      SECRETS_KEY: randomBytes(32).toString("hex"),
      ALLOW_PRIVATE_NETWORK_TARGETS: "true"
    }
    const first = await serveChild(env)
    const owner = await signedIn(at(first.url), "labels-crash-owner")
    const { id } = await servingLeaderboard(owner.api, aCandidate(labeller.url, { model_name: "slow-labeller" }))
    await owner.api((c) => c.pushDatasets.push({ params: { leaderboard_id: id }, payload: rows }))
    await owner.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: id } }))
    const { job } = await owner.api((c) => c.datasetAdmin.autoLabels({ params: { leaderboard_id: id } }))
    expect(job).toMatchObject({ status: "running", total: 200 })

    // kill once the job is into its second page (a 50 ms labeller, four at a time, takes ~3 s for all)
    await expect.poll(async () => (await labelling(owner.api, id))?.labelled ?? 0, { timeout: 30_000, interval: 20 })
      .toBeGreaterThanOrEqual(40)
    first.child.kill("SIGKILL")
    await first.exited
    expect(first.child.signalCode).toBe("SIGKILL")
    const askedBeforeKill = labeller.asked.size
    expect(askedBeforeKill).toBeLessThan(200)

    // the new instance takes the job over once the dead one's shard locks are gone: up to their 35 s expiry
    const second = await serveChild(env)
    const api = (await signedIn(at(second.url), "labels-crash-owner")).api
    await expect.poll(async () => (await labelling(api, id))?.status, { timeout: 90_000, interval: 250 }).toBe("succeeded")
    expect(await labelling(api, id)).toMatchObject({ job_id: job.job_id, labelled: 200, failed: 0, remaining: 0, version: 2 })

    const text = await api((c) => c.pushDatasets.download({ params: { leaderboard_id: id }, query: { version: 2 } }))
    const stored = text.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(stored).toHaveLength(210)
    for (const row of stored) {
      const isGiven = String(row["input"]).startsWith("given")
      expect(row, "given references stay; the others are labelled").toMatchObject(
        isGiven
          ? { expected: String(row["input"]).replace(/^given (\d+)\?$/, "given answer $1") }
          : { expected: `label: ${row["input"]}`, label_source: "auto", label_model: "slow-labeller" }
      )
      if (isGiven) expect(row["label_source"]).toBeUndefined()
    }

    // Why at most twice, and only a few rows: each page of rows is a durable activity, and the
    // restarted job replays the pages whose result was stored without calling the labeller. Pages run
    // one after another, so only the page under way at the kill is redone, and its redo skips the rows
    // whose label was committed. Left are the rows the labeller was asked for whose label was not
    // committed yet: calls in flight, at most `labelConcurrency` of them. (Had the kill come after a
    // page's labels but before its result was stored, the redo finds those rows labelled and asks for
    // none of them.) The download lists rows in id order, the order pages take them.
    const pageOrder = stored.filter((row) => !String(row["input"]).startsWith("given")).map((row) => String(row["input"]))
    expect(pageOrder).toHaveLength(200)
    expect([...labeller.asked.keys()].filter((input) => input.startsWith("given")), "rows with a reference").toEqual([])
    const askedAgain = pageOrder.filter((input) => labeller!.asked.get(input) !== 1)
    for (const input of askedAgain) expect(labeller.asked.get(input), input).toBe(2)
    expect(askedAgain.length).toBeLessThanOrEqual(labelConcurrency)
    const pages = new Set(askedAgain.map((input) => Math.floor(pageOrder.indexOf(input) / labelPageSize)))
    expect(pages.size, `rows asked again: ${askedAgain.join(", ")}`).toBeLessThanOrEqual(1)
    expect(labeller.asked.size).toBe(200)
  }, 180_000)
})
