import { expect } from "vitest"
import { aLeaderboard, type SignedIn } from "./Builders.ts"
import type { Podium } from "./Podium.ts"

/** Raw JSON calls as the signed-in owner (or with `token`). */
export const caller = (podium: Podium, owner: SignedIn) => (method: string, path: string, json?: unknown, token = owner.session) =>
  podium.request(method, path, json === undefined ? { token } : { token, json })

/** Polls `done` every 50 ms until it holds; fails after `timeoutMs` (usable outside a test, in beforeAll). */
const until = async (done: () => Promise<boolean>, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`still not done after ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * A model of a 100-row PUSH leaderboard (q0 … q99, references a0 … a99), fine-tuned once by the
 * `trainer` and deployed: what model inference needs. Answers the model's and the version's ids.
 */
export const deployedModel = async (podium: Podium, owner: SignedIn, trainer: "openai" | "few_shot" = "openai") => {
  const call = caller(podium, owner)
  const { id: leaderboard } = (await owner.api((c) => c.leaderboards.create({ payload: aLeaderboard({ eval_type: "exact" }) }))).leaderboard
  const payload = Array.from({ length: 100 }, (_, i) => ({ input: `q${i}`, expected: `a${i}` }))
  await owner.api((c) => c.pushDatasets.push({ params: { leaderboard_id: leaderboard }, payload }))
  await owner.api((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: leaderboard } }))
  const bases = (await call("GET", "/api/base-models")).body.base_models as Array<{ id: string; trainer: string }>
  const base = bases.find((b) => b.trainer === trainer)!.id
  const modelId = (await call("POST", "/api/models", { name: `${trainer} model`, leaderboard_ids: [leaderboard], selected_base_model_version_id: base }))
    .body.model.id as string
  const started = await call("POST", `/api/models/${modelId}/fine-tune/run`)
  const versionOf = async () => ((await call("GET", `/api/models/${modelId}/versions`)).body.versions as Array<any>)[0]
  await until(async () => (await versionOf())?.fine_tune_run_id === started.body.run.id, 30_000)
  const versionId = (await versionOf()).id as string
  expect((await call("POST", `/api/models/${modelId}/versions/${versionId}/deploy`)).status).toBe(200)
  await until(async () => (await versionOf()).deployment_status === "active", 20_000)
  return { modelId, versionId, leaderboard }
}

/** The reference of a question of these datasets: q7 → a7. */
export const referenceOf = (question: string) => question.replace(/^q/, "a")

export const lastUser = (messages: ReadonlyArray<{ readonly role: string; readonly content: string }>) =>
  messages.findLast((m) => m.role === "user")?.content ?? ""

/**
 * The router's catalogue on the model fake with one model, `acme/small` ("Acme Small"), that knows
 * the answers only when shown how: with demonstrations (earlier assistant turns) before the question.
 */
export const routerWithFewShotModel = (fake: {
  files: Record<string, { readonly contentType: string; readonly body: string | ((search: URLSearchParams) => unknown) }>
  models: Record<string, (question: string, body: any) => string | { readonly status: number }>
}) => {
  fake.files["/api/v1/models"] = {
    contentType: "application/json",
    body: JSON.stringify({ data: [{ id: "acme/small", name: "Acme Small", pricing: { prompt: "0", completion: "0" } }] })
  }
  fake.models["acme/small"] = (q, body) =>
    (body.messages as Array<{ role: string }>).some((m) => m.role === "assistant") ? referenceOf(q) : "no idea"
}
