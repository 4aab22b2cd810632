import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FineTuneFake, startFineTuneFake } from "./fakes/FineTuneFake.ts"
import { aLeaderboard, type NewCandidate, servingLeaderboard, type SignedIn, signedIn } from "./support/Builders.ts"
import { expectError } from "./support/Client.ts"
import { caller, deployedModel, lastUser } from "./support/Models.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

// The state the loop ends in: a leaderboard served by a Service candidate (a deployed Podium model)
// and no judge model. That candidate labels pushed rows (auto-labels) and proposes references
// (improve-dataset) like any other serving candidate, through its model's deployed version.

const fineTuneKey = "sk-ft-5d0c8e2a7f13"
let tuner: FineTuneFake
let podium: Podium
let owner: SignedIn
let call: ReturnType<typeof caller>
let modelId: string

/** What the tuned model answers: the question (inside `<question>` when asked for a reference), labelled. */
const answerOf = (content: string) => `label of ${content.match(/<question>\n([\s\S]*?)\n<\/question>/)?.[1] ?? content}`

beforeAll(async () => {
  tuner = await startFineTuneFake({ apiKey: fineTuneKey })
  tuner.answer = (model, messages) => model.startsWith("ft:") ? answerOf(lastUser(messages)) : "base"
  podium = await startPodium({
    FINE_TUNE_BASE_URL: tuner.baseUrl,
    FINE_TUNE_API_KEY: fineTuneKey,
    FINE_TUNE_BASE_MODELS: "base-model",
    FINE_TUNE_POLL_INTERVAL_MS: "50"
  })
  owner = await signedIn(podium, "service-labeller-owner")
  call = caller(podium, owner)
  modelId = (await deployedModel(podium, owner, "openai")).modelId
}, 120_000)
afterAll(async () => {
  await podium.stop()
  await tuner.close()
})

const service = (): NewCandidate => ({ name: "our model", platform: "Service", model_id: modelId })

const logCount = async () =>
  ((await call("GET", `/api/models/${modelId}/inference/logs?limit=100`)).body.logs as Array<unknown>).length

/** A PUSH leaderboard served by the Service candidate, no judge, with `rows` consolidated into version 1. */
const servedBoard = async (rows: ReadonlyArray<Record<string, unknown>>) => {
  const { id } = await servingLeaderboard(owner.api, service(), aLeaderboard({ eval_type: "exact" }))
  await owner.api((c) => c.pushDatasets.push({ params: { leaderboard_id: id }, payload: [...rows] }))
  await owner.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: id } }))
  return id
}

const rows = [
  { id: "r1", input: "capital of France?" },
  { id: "r2", input: "2+2?", expected: "4" },
  { id: "r3", question: "colour of the sky?" }
]

describe("a Service candidate as the labeller", () => {
  it("auto-labels: the serving Service candidate fills the missing references through its deployed version", async () => {
    const id = await servedBoard(rows)
    const before = await logCount()
    const { job } = await owner.api((c) => c.datasetAdmin.autoLabels({ params: { leaderboard_id: id } }))
    expect(job).toMatchObject({ status: "running", base_version: 1, total: 2, labeller: "our model" })
    await expect.poll(async () => (await owner.api((c) => c.pushDatasets.status({ params: { leaderboard_id: id } }))).labelling?.status, {
      timeout: 20_000,
      interval: 50
    }).toBe("succeeded")
    const status = await owner.api((c) => c.pushDatasets.status({ params: { leaderboard_id: id } }))
    expect(status.labelling).toMatchObject({ labelled: 2, failed: 0, version: 2 })
    const reply = await podium.request("GET", `/v1/leaderboard/${id}/dataset?version=2`, { token: owner.session })
    const labelled = reply.text.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(labelled.map((r) => [r["id"], r["expected"], r["label_source"] ?? null, r["label_model"] ?? null])).toEqual([
      ["r1", "label of capital of France?", "auto", "our model"],
      ["r2", "4", null, null],
      ["r3", "label of colour of the sky?", "auto", "our model"]
    ])
    // each label is a call of the model's version, in its inference log
    await expect.poll(logCount, { timeout: 5_000, interval: 50 }).toBe(before + 2)
  })

  it("improve-dataset with no judge: 202, and the serving Service candidate proposes the references", async () => {
    const id = await servedBoard(rows)
    // the spec's request has no body
    const started = await podium.request("POST", `/api/leaderboards/${id}/improve-dataset`, { token: owner.session })
    expect(started.status).toBe(202)
    expect(started.body.improvement).toMatchObject({ status: "running", labeller: "our model", replace_references: false })
    const improvement = async () => (await owner.api((c) => c.runs.improvement({ params: { leaderboard_id: id } }))).improvement
    await expect.poll(async () => (await improvement())?.status, { timeout: 20_000, interval: 50 }).not.toBe("running")
    expect(await improvement()).toMatchObject({ status: "succeeded", total: 2, improved: 2, failed: 0, version: 1 })

    // a run reads the proposals over the dataset's rows
    const { run } = await owner.api((c) => c.runs.start({ params: { leaderboard_id: id }, payload: null }))
    const get = () => owner.api((c) => c.runs.get({ params: { leaderboard_id: id, run_id: run.id } }))
    await expect.poll(async () => (await get()).run.status, { timeout: 30_000, interval: 50 }).not.toMatch(/^(queued|running)$/)
    expect((await get()).run).toMatchObject({ status: "succeeded", dataset: { rows: 3, improved_rows: 2 } })
    const { rows: results } = await owner.api((c) => c.runs.results({ params: { leaderboard_id: id, run_id: run.id }, query: {} }))
    expect(results.map((r) => r.reference).sort()).toEqual(["4", "label of capital of France?", "label of colour of the sky?"])
  })

  it("with neither a judge nor a serving candidate: auto-labels 409 no_labeller, improve-dataset 409 not_runnable", async () => {
    const { id } = (await owner.api((c) => c.leaderboards.create({ payload: aLeaderboard({ eval_type: "exact" }) }))).leaderboard
    for (const name of ["one", "two"]) {
      await owner.api((c) => c.leaderboards.addModel({ params: { leaderboard_id: id }, payload: { ...service(), name } }))
    }
    await owner.api((c) => c.pushDatasets.push({ params: { leaderboard_id: id }, payload: [...rows] }))
    await owner.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: id } }))
    // two candidates, none chosen and no ranking yet: nothing serves
    await expectError(owner.api((c) => c.datasetAdmin.autoLabels({ params: { leaderboard_id: id } })), 409, "no_labeller")
    const refused = await expectError(
      owner.api((c) => c.runs.improveDataset({ params: { leaderboard_id: id }, payload: null })),
      409,
      "not_runnable"
    )
    expect(refused.error.message).toContain("judge_model")
    expect(refused.error.message).toContain("chosen_leaderboard_model_id")
  })
})
