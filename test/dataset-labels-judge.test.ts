import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type LabellerFake, startLabellerFake } from "./fakes/LabellerFake.ts"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { aCandidate, aLeaderboard, servingLeaderboard, type SignedIn, signedIn } from "./support/Builders.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

// A leaderboard with a judge model labels through the judge, with the workspace's router
// integration token, even though it also serves a candidate.

const routerToken = "sk-or-v1-judge-labeller-key"
let router: LabellerFake
let candidate: OpenAiFake
let podium: Podium
let owner: SignedIn

beforeAll(async () => {
  router = await startLabellerFake({ key: routerToken })
  candidate = await startOpenAiFake()
  podium = await startPodium({ ROUTER_BASE_URL: `${router.url}/api/v1` })
  owner = await signedIn(podium, "judge-labels-owner")
})
afterAll(async () => {
  await podium.stop()
  await candidate.close()
  await router.close()
})

describe("auto-labels with a judge", () => {
  it("the judge labels through the router integration, not the serving candidate", async () => {
    await owner.api((c) => c.integrations.validate({ payload: { provider: "router", token: routerToken } }))
    const { id } = await servingLeaderboard(
      owner.api,
      aCandidate(candidate.url, { model_name: "candidate-model" }),
      aLeaderboard({ judge_provider: "router", judge_model: "judge/model" })
    )
    const rows = [{ input: "q1" }, { input: "q2", expected: "a2" }]
    await owner.api((c) => c.pushDatasets.push({ params: { leaderboard_id: id }, payload: rows }))
    await owner.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: id } }))

    const { job } = await owner.api((c) => c.datasetAdmin.autoLabels({ params: { leaderboard_id: id } }))
    expect(job).toMatchObject({ labeller: "router:judge/model", total: 1 })
    await expect.poll(async () => (await owner.api((c) => c.pushDatasets.status({ params: { leaderboard_id: id } }))).labelling, {
      timeout: 20_000,
      interval: 50
    }).toMatchObject({ status: "succeeded", labelled: 1, failed: 0, version: 2 })

    const calls = router.seen.filter((request) => request.path === "/api/v1/chat/completions")
    expect(calls).toHaveLength(1)
    expect(calls[0]!.body).toMatchObject({ model: "judge/model", messages: [{ role: "user", content: "q1" }] })
    expect(calls[0]!.authorization).toBe(`Bearer ${routerToken}`)
    expect(candidate.seen).toEqual([])

    const text = await owner.api((c) => c.pushDatasets.download({ params: { leaderboard_id: id }, query: { version: 2 } }))
    expect(text.trimEnd().split("\n").map((line) => JSON.parse(line))).toEqual([
      { input: "q1", expected: "label: q1", label_source: "auto", label_model: "router:judge/model" },
      { input: "q2", expected: "a2" }
    ])
  })
})
