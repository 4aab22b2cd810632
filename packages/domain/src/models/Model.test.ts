import { DateTime, Result } from "effect"
import { describe, expect, it } from "vitest"
import { baseModelId, stableUuid } from "./BaseModel.ts"
import { deployable, deploymentOf } from "./Deployment.ts"
import { FineTuneStatus, gateOf, isActive } from "./FineTuneRun.ts"
import { nextFineTune, unalias } from "./Model.ts"
import { withDemonstrations } from "./ModelVersion.ts"

describe("unalias", () => {
  it("reads camelCase aliases as their fields", () => {
    const body = unalias({ name: "m", modelName: "x", leaderboardIds: ["a"], autoUpdateModel: true, continuousSelfLearning: false })
    expect(body).toEqual(Result.succeed({
      name: "m",
      model_name: "x",
      leaderboard_ids: ["a"],
      auto_update_model: true,
      continuous_self_learning: false
    }))
  })

  it("refuses a field given both ways with different values, and accepts the same value twice", () => {
    const clash = unalias({ name: "m", model_name: "x", modelName: "y" })
    expect(Result.isFailure(clash) && clash.failure.path).toEqual(["modelName"])
    expect(unalias({ model_name: "x", modelName: "x" })).toEqual(Result.succeed({ model_name: "x" }))
  })
})

describe("nextFineTune", () => {
  const at = DateTime.makeUnsafe("2026-01-31T10:00:00Z")
  it("is a day, a week or a calendar month later", () => {
    expect(DateTime.formatIso(nextFineTune("DAILY", at))).toBe("2026-02-01T10:00:00.000Z")
    expect(DateTime.formatIso(nextFineTune("WEEKLY", at))).toBe("2026-02-07T10:00:00.000Z")
    expect(DateTime.formatIso(nextFineTune("MONTHLY", at)).slice(0, 7)).toBe("2026-02")
  })
})

describe("gateOf", () => {
  it("deploys when nothing is deployed", () => {
    expect(gateOf(0.5, null).decision).toBe("deploy")
  })
  it("deploys a version that scores at least as well, and keeps the deployed one otherwise", () => {
    expect(gateOf(0.8, { version_id: "v1", score: 0.8 })).toMatchObject({ decision: "deploy", candidate_score: 0.8, deployed_score: 0.8 })
    expect(gateOf(0.7, { version_id: "v1", score: 0.8 })).toMatchObject({ decision: "keep", deployed_version_id: "v1" })
  })
  it("keeps the deployed version when a score is unknown", () => {
    expect(gateOf(null, { version_id: "v1", score: 0.8 }).decision).toBe("keep")
    expect(gateOf(0.9, { version_id: "v1", score: null }).decision).toBe("keep")
  })
  it("says why, with both scores and the deployed version", () => {
    expect(gateOf(0.5, null)).toEqual({
      candidate_score: 0.5, deployed_score: null, deployed_version_id: null, decision: "deploy", reason: "no version was deployed"
    })
    const deployed = { version_id: "v1", score: 0.8 }
    expect([gateOf(0.8, deployed), gateOf(0.7, deployed), gateOf(null, deployed)].map((g) => [g.decision, g.reason])).toEqual([
      ["deploy", "the new version scores at least as well as the deployed one"],
      ["keep", "the new version scores lower than the deployed one"],
      ["keep", "the held-out score could not be measured for both versions"]
    ])
    expect(gateOf(null, { version_id: "v1", score: null })).toMatchObject({ candidate_score: null, deployed_score: null, deployed_version_id: "v1" })
  })
})

describe("isActive", () => {
  it("a queued or running fine-tune holds its model; an ended one does not", () => {
    expect(FineTuneStatus.literals.filter(isActive)).toEqual(["queued", "running"])
  })
})

describe("stableUuid", () => {
  it("is a version 8 uuid, the same for the same name and different for others", () => {
    const id = baseModelId("openai", "gpt-4o-mini-2024-07-18")
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(baseModelId("openai", "gpt-4o-mini-2024-07-18")).toBe(id)
    expect(baseModelId("few_shot", "gpt-4o-mini-2024-07-18")).not.toBe(id)
    const many = new Set(Array.from({ length: 2000 }, (_, i) => stableUuid(`model-${i}`)))
    expect(many.size).toBe(2000)
  })
})

describe("withDemonstrations", () => {
  it("puts the demonstrations after the system message and before the caller's turns", () => {
    const demos = [{ messages: [{ role: "system", content: "old" }, { role: "user", content: "q1" }, { role: "assistant", content: "a1" }] }]
    expect(withDemonstrations(demos, [{ role: "system", content: "S" }, { role: "user", content: "q" }])).toEqual([
      { role: "system", content: "S" },
      { role: "user", content: "q1" },
      { role: "assistant", content: "a1" },
      { role: "user", content: "q" }
    ])
  })
})

describe("deployments", () => {
  it("deploy a version that is not deploying or active, with the spec's option ranges and defaults", () => {
    expect((["none", "failed", "stopped"] as const).every(deployable)).toBe(true)
    expect((["deploying", "active"] as const).some(deployable)).toBe(false)
    expect(deploymentOf({})).toEqual(Result.succeed({ max_workers: 4, active_workers: 0, default_max_new_tokens: 512, idle_timeout: 300 }))
    expect(deploymentOf({ max_workers: 2, active_workers: 2 })._tag).toBe("Success")
    const refused = deploymentOf({ max_workers: 2, active_workers: 3 })
    expect(Result.isFailure(refused) && refused.failure.path).toEqual(["active_workers"])
  })
})
