import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { aCandidate, aLeaderboard, servingLeaderboard, type SignedIn, signedIn } from "./support/Builders.ts"
import { expectError } from "./support/Client.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

let fake: OpenAiFake
let podium: Podium
let owner: SignedIn

beforeAll(async () => {
  fake = await startOpenAiFake()
  podium = await startPodium()
  owner = await signedIn(podium, "labels-owner")
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

const rows = [
  { id: "r1", input: "capital of France?" },
  { id: "r2", input: "2+2?", expected: "4" },
  { id: "r3", messages: [{ role: "user", content: "say hi" }] },
  { id: "r4", question: "colour of the sky?", answer: "blue" },
  { id: "r5", prompt: "largest planet?", expected: "  " }
]

/** A PUSH leaderboard served by the fake, with `rows` consolidated into version 1. */
const labelledLeaderboard = async () => {
  const { id } = await servingLeaderboard(owner.api, aCandidate(fake.url, { model_name: "labeller-model" }), aLeaderboard())
  await owner.api((c) => c.pushDatasets.push({ params: { leaderboard_id: id }, payload: rows }))
  await owner.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: id } }))
  return id
}

const download = async (id: LeaderboardId, version: number) => {
  const reply = await podium.request("GET", `/v1/leaderboard/${id}/dataset?version=${version}`, { token: owner.session })
  expect(reply.status).toBe(200)
  return reply.text.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>)
}

/** The status once the newest job has finished (bounded wait). */
const finished = async (id: LeaderboardId) => {
  for (let tries = 0; tries < 400; tries++) {
    const status = await owner.api((c) => c.pushDatasets.status({ params: { leaderboard_id: id } }))
    if (status.labelling !== null && status.labelling.status !== "running") return status
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error("the auto-labels job did not finish")
}

describe("auto-labels", () => {
  it("fills missing references in a new version and never replaces a given one", async () => {
    fake.mode = "ok"
    const id = await labelledLeaderboard()
    const asked = fake.seen.length
    const { job } = await owner.api((c) => c.datasetAdmin.autoLabels({ params: { leaderboard_id: id } }))
    expect(job).toMatchObject({ status: "running", base_version: 1, total: 3, labeller: "labeller-model" })

    const status = await finished(id)
    expect(status.labelling).toMatchObject({ status: "succeeded", labelled: 3, failed: 0, remaining: 0, version: 2 })
    expect(status.latest_version).toMatchObject({ version: 2, trigger: "auto_labels", labelled_rows: 3, row_count: 5 })
    expect(fake.seen.length - asked).toBe(3)

    const labelled = await download(id, 2)
    expect(labelled.map((r) => [r["id"], r["expected"] ?? r["answer"], r["label_source"] ?? null])).toEqual([
      ["r1", "echo: capital of France?", "auto"],
      ["r2", "4", null],
      ["r3", "echo: say hi", "auto"],
      ["r4", "blue", null],
      ["r5", "echo: largest planet?", "auto"]
    ])
    expect(labelled[0]!["label_model"]).toBe("labeller-model")
    // version 1 is unchanged
    expect(await download(id, 1)).toEqual(rows)
  })

  it("counts rows the labeller keeps failing on, and a later job labels them", async () => {
    const id = await labelledLeaderboard()
    fake.mode = "error"
    const asked = fake.seen.length
    await owner.api((c) => c.datasetAdmin.autoLabels({ params: { leaderboard_id: id } }))
    const failed = await finished(id)
    // a 5xx is retried with backoff: four attempts per row
    expect(fake.seen.length - asked).toBe(3 * 4)
    expect(failed.labelling).toMatchObject({ status: "succeeded", labelled: 0, failed: 3, version: null })
    expect(failed.latest_version?.version).toBe(1)

    fake.mode = "ok"
    await owner.api((c) => c.datasetAdmin.autoLabels({ params: { leaderboard_id: id } }))
    const done = await finished(id)
    expect(done.labelling).toMatchObject({ status: "succeeded", labelled: 3, failed: 0, version: 2 })
  })

  it("needs a labeller and a version", async () => {
    const { id } = (await owner.api((c) => c.leaderboards.create({ payload: aLeaderboard() }))).leaderboard
    await expectError(owner.api((c) => c.datasetAdmin.autoLabels({ params: { leaderboard_id: id } })), 404, "not_found")
    await owner.api((c) => c.pushDatasets.push({ params: { leaderboard_id: id }, payload: { input: "q" } }))
    await owner.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: id } }))
    await expectError(owner.api((c) => c.datasetAdmin.autoLabels({ params: { leaderboard_id: id } })), 409, "no_labeller")
  })
})
