import { DateTime, Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { baseModelId, stableUuid } from "./BaseModel.ts"
import { deployable, deploymentOf } from "./Deployment.ts"
import { FineTuneStatus, Gate, isActive } from "./FineTuneRun.ts"
import { decideGate, defaultGatePolicy, type GateEvidence } from "./GatePolicy.ts"
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

describe("Gate", () => {
  const decode = Schema.decodeUnknownSync(Gate)
  it("decodes a gate stored before the paired statistics were recorded", () => {
    const old = { candidate_score: 0.7, deployed_score: 0.8, deployed_version_id: "v1", decision: "keep", reason: "the new version scores lower than the deployed one" }
    expect(decode(old)).toEqual(old)
  })
  it("carries decideGate's evidence: the paired statistics, the policy and both scores", () => {
    // 20 shared rows, both right on 18: difference 0 with Newcombe's interval ±0.157 (see GatePolicy.test.ts)
    const policy = { ...defaultGatePolicy, margin: 0.2 }
    const comparison = { shared_rows: 20, wins: 0, losses: 0, p_value: 1, difference: { estimate: 0, low: -0.15707164129616266, high: 0.15707164129616266 } }
    const evidence: GateEvidence = {
      ...decideGate(policy, comparison), policy, deployed_version_id: "v1", candidate_score: 0.9, deployed_score: 0.9
    }
    expect(evidence.decision).toBe("deploy")
    expect(decode(JSON.parse(JSON.stringify(evidence)))).toEqual(evidence)
    expect(Schema.is(Gate)({ ...evidence, decision: "maybe" })).toBe(false)
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
