import { Result, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  applyGatePolicyPatch,
  decideGate,
  defaultGatePolicy,
  type GateComparison,
  gateComparison,
  GateDecision,
  GateEvidence,
  GatePolicy
} from "./GatePolicy.ts"

// Reference statistics, as the comparison's producer would give them: p from
// scipy.stats.binomtest(losses, wins + losses, 0.5).pvalue (two-sided exact McNemar); the interval is
// the paired Wald 95% interval (d ± norm.ppf(0.975) · sqrt(((wins + losses)/n − d²)/n), d = (wins − losses)/n).
const tied1000: GateComparison = {
  shared_rows: 1000, wins: 40, losses: 30, p_value: 0.281978921793656,
  difference: { estimate: 0.01, low: -0.006386517981759253, high: 0.026386517981759255 }
}
const slightlyWorse1000: GateComparison = {
  shared_rows: 1000, wins: 30, losses: 40, p_value: 0.281978921793656,
  difference: { estimate: -0.01, low: -0.026386517981759255, high: 0.006386517981759253 }
}
const slightlyWorse2000: GateComparison = {
  shared_rows: 2000, wins: 60, losses: 70, p_value: 0.4300208839753418,
  difference: { estimate: -0.005, low: -0.016171364886946465, high: 0.006171364886946465 }
}
const worse200: GateComparison = {
  shared_rows: 200, wins: 5, losses: 25, p_value: 0.0003249142318964005,
  difference: { estimate: -0.1, low: -0.1518557728173623, high: -0.048144227182637736 }
}
const wide60: GateComparison = {
  shared_rows: 60, wins: 5, losses: 8, p_value: 0.5810546875,
  difference: { estimate: -0.05, low: -0.16709771067825688, high: 0.06709771067825687 }
}
const better200: GateComparison = {
  shared_rows: 200, wins: 40, losses: 5, p_value: 7.878384167270269e-8,
  difference: { estimate: 0.175, low: 0.11389829960334896, high: 0.23610170039665102 }
}
const few15: GateComparison = {
  shared_rows: 15, wins: 3, losses: 1, p_value: 0.625,
  difference: { estimate: 0.13333333333333333, low: -0.11913401341273369, high: 0.3858006800794004 }
}

describe("applyGatePolicyPatch", () => {
  const refused = (patch: Parameters<typeof applyGatePolicyPatch>[1], at?: ReadonlyArray<string>) => {
    const result = applyGatePolicyPatch(defaultGatePolicy, patch, at)
    if (Result.isSuccess(result)) throw new Error("expected InvalidInput")
    return result.failure
  }

  it("changes what the patch sends and keeps the rest", () => {
    expect(defaultGatePolicy).toEqual({ alpha: 0.05, margin: 0.02, min_rows: 20 })
    expect(Result.getOrThrow(applyGatePolicyPatch(defaultGatePolicy, {}))).toEqual(defaultGatePolicy)
    expect(Result.getOrThrow(applyGatePolicyPatch(defaultGatePolicy, { margin: 0, min_rows: 1 }))).toEqual({ alpha: 0.05, margin: 0, min_rows: 1 })
  })

  it("names the field that is out of range", () => {
    for (const alpha of [0, 1, 3, Number.NaN]) expect(refused({ alpha }).path).toEqual(["alpha"])
    for (const margin of [1, -0.5, Number.NaN]) expect(refused({ margin }).path).toEqual(["margin"])
    for (const min_rows of [0, 1.5, Number.NaN]) expect(refused({ min_rows }).path).toEqual(["min_rows"])
    expect(refused({ min_rows: 0 }, ["gate_policy"])).toMatchObject({
      _tag: "InvalidInput",
      message: "min_rows must be a whole number of at least 1 (got 0)",
      path: ["gate_policy", "min_rows"]
    })
  })

  it("agrees with the schema on every patch it accepts", () => {
    const anyNumber = fc.oneof(fc.double({ min: -2, max: 2, noNaN: true }), fc.integer({ min: -5, max: 100 }))
    fc.assert(fc.property(fc.record({ alpha: anyNumber, margin: anyNumber, min_rows: anyNumber }, { requiredKeys: [] }), (patch) => {
      const decoded = Schema.decodeUnknownResult(GatePolicy)({ ...defaultGatePolicy, ...patch })
      expect(Result.isSuccess(applyGatePolicyPatch(defaultGatePolicy, patch))).toBe(Result.isSuccess(decoded))
    }))
  })
})

describe("decideGate", () => {
  it("deploys when no version was deployed", () => {
    expect(decideGate(defaultGatePolicy, null)).toEqual({
      decision: "deploy", reason: "no version was deployed", shared_rows: 0, wins: 0, losses: 0, p_value: null, difference: null
    })
  })

  it("deploys a non-inferior version that scores no better, and one that is slightly worse within the margin", () => {
    expect(decideGate(defaultGatePolicy, tied1000)).toEqual({
      ...tied1000,
      decision: "deploy",
      reason: "deployed the new version: non-inferior (difference 0.01, interval [-0.006, 0.026], lower bound above -0.02) and not significantly worse (p = 0.28) on 1000 shared held-out rows"
    })
    expect(decideGate(defaultGatePolicy, slightlyWorse2000).decision).toBe("deploy")
    // The same estimate on half the rows: the interval reaches below -0.02, so non-inferiority is not shown.
    expect(decideGate(defaultGatePolicy, slightlyWorse1000).decision).toBe("keep")
    expect(decideGate(defaultGatePolicy, better200).decision).toBe("deploy")
  })

  it("keeps the deployed version when the new one is significantly worse", () => {
    expect(decideGate(defaultGatePolicy, worse200)).toEqual({
      ...worse200,
      decision: "keep",
      reason: "kept the deployed version: the new version is significantly worse: wrong on 25 rows where the deployed one is right and right on 5 where it is wrong, p = 0.00032 < 0.05 on 200 shared held-out rows"
    })
    // Significant but in the new version's favour is not "worse".
    expect(decideGate(defaultGatePolicy, { ...worse200, wins: 25, losses: 5, difference: null }).reason).toBe(
      "kept the deployed version: the difference could not be measured on 200 shared held-out rows"
    )
  })

  it("keeps it when non-inferiority is not shown, though not significantly worse", () => {
    expect(decideGate(defaultGatePolicy, wide60).reason).toBe(
      "kept the deployed version: the new version may be worse by more than the margin: difference -0.05, interval [-0.167, 0.067], lower bound not above -0.02, on 60 shared held-out rows"
    )
    // A wider margin lets the same version through.
    expect(decideGate({ ...defaultGatePolicy, margin: 0.2 }, wide60).decision).toBe("deploy")
    // The lower bound must be strictly above -margin.
    expect(decideGate({ ...defaultGatePolicy, margin: 0.02 }, { ...tied1000, difference: { estimate: 0, low: -0.02, high: 0.02 } }).decision).toBe("keep")
  })

  it("keeps it on fewer than min_rows shared rows, whatever they show", () => {
    expect(decideGate(defaultGatePolicy, few15).reason).toBe("kept the deployed version: only 15 shared held-out rows, 20 needed")
    expect(decideGate({ ...defaultGatePolicy, min_rows: 15 }, { ...few15, difference: { estimate: 0.1, low: 0, high: 0.2 } }).decision).toBe("deploy")
    expect(decideGate({ ...defaultGatePolicy, min_rows: 16 }, { ...few15, difference: { estimate: 0.1, low: 0, high: 0.2 } }).decision).toBe("keep")
  })

  it("writes a very small p as p < 0.0001", () => {
    expect(decideGate(defaultGatePolicy, { ...better200, wins: 5, losses: 40 }).reason).toBe(
      "kept the deployed version: the new version is significantly worse: wrong on 40 rows where the deployed one is right and right on 5 where it is wrong, p < 0.0001 (alpha 0.05) on 200 shared held-out rows"
    )
  })

  const comparison: fc.Arbitrary<GateComparison> = fc.record({
    shared_rows: fc.integer({ min: 0, max: 60 }),
    wins: fc.integer({ min: 0, max: 30 }),
    losses: fc.integer({ min: 0, max: 30 }),
    p_value: fc.option(fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0.01, 0.05, 0.1)), { nil: null }),
    difference: fc.option(
      fc.tuple(fc.double({ min: -0.3, max: 0.3, noNaN: true }), fc.double({ min: 0, max: 0.2, noNaN: true }), fc.constantFrom(0, 0.01, 0.02, 0.1))
        .map(([estimate, spread, below]) => ({ estimate, low: below > 0 ? -below : estimate - spread, high: estimate + spread })),
      { nil: null }
    )
  })
  const policy = fc.record({
    alpha: fc.constantFrom(0.01, 0.05, 0.1),
    margin: fc.constantFrom(0, 0.01, 0.02, 0.1),
    min_rows: fc.integer({ min: 1, max: 40 })
  })

  it("never deploys on too few rows, without non-inferiority, or when significantly worse; else deploys", () => {
    const seen = { deploy: 0, keep: 0 }
    fc.assert(fc.property(policy, comparison, (p, c) => {
      const gate = decideGate(p, c)
      seen[gate.decision] += 1
      const blocked = c.shared_rows < p.min_rows ||
        c.difference === null ||
        c.difference.low <= -p.margin ||
        (c.p_value !== null && c.p_value < p.alpha && c.losses > c.wins)
      expect(gate.decision).toBe(blocked ? "keep" : "deploy")
      expect(gate).toMatchObject({ shared_rows: c.shared_rows, wins: c.wins, losses: c.losses, p_value: c.p_value, difference: c.difference })
      expect(Schema.is(GateDecision)(gate)).toBe(true)
    }), { numRuns: 2000 })
    expect(seen.deploy).toBeGreaterThan(0)
    expect(seen.keep).toBeGreaterThan(0)
  })

  it("fits what a run's gate records", () => {
    const evidence: GateEvidence = {
      ...decideGate(defaultGatePolicy, tied1000),
      policy: defaultGatePolicy,
      deployed_version_id: "00000000-0000-4000-8000-000000000001",
      candidate_score: 0.82,
      deployed_score: 0.81
    }
    expect(Schema.decodeUnknownSync(GateEvidence)(JSON.parse(JSON.stringify(evidence)))).toEqual(evidence)
  })
})

describe("gateComparison", () => {
  // References: p = scipy.stats.binomtest(wins, wins + losses, 0.5).pvalue (1 with no discordant
  // row); the interval is Newcombe's method 10, computed in Python from the paper's formulas with
  // z = scipy.stats.norm.ppf(0.975). For 20 of 20 right on both sides it is ±(1 − 20/(20 + z²)),
  // one minus the Wilson lower bound of 20/20.
  const verdicts = (pattern: string) => new Map([...pattern].map((c, i) => [i, c === "1" ? true : c === "0" ? false : null] as const))

  it("pairs the rows both versions have a verdict on: wins, losses, McNemar's p and new minus deployed", () => {
    expect(gateComparison(verdicts("1".repeat(20)), verdicts("1".repeat(20)))).toEqual({
      shared_rows: 20, wins: 0, losses: 0, p_value: 1,
      difference: { estimate: 0, low: -0.16112515805281935, high: 0.16112515805281935 }
    })
    const same18 = "1".repeat(18) + "00"
    const equal = gateComparison(verdicts(same18), verdicts(same18))
    expect(equal).toMatchObject({ shared_rows: 20, wins: 0, losses: 0, p_value: 1 })
    expect(equal.difference!.low).toBeCloseTo(-0.15707164129616266, 12)
    // new right on 8 of 20, deployed on 18 (the 8 among them)
    const worse = gateComparison(verdicts("1".repeat(8) + "0".repeat(12)), verdicts(same18))
    expect(worse).toMatchObject({ shared_rows: 20, wins: 0, losses: 10, p_value: 0.001953125 })
    expect(worse.difference!.estimate).toBe(-0.5)
    expect(worse.difference!.low).toBeCloseTo(-0.6880595375939762, 12)
    expect(worse.difference!.high).toBeCloseTo(-0.22214360003955796, 12)
  })

  it("leaves out rows either version has no verdict on, or that only one was asked", () => {
    const candidate = new Map<number, boolean | null>([[1, true], [2, null], [3, false], [4, true], [9, true]])
    const deployed = new Map<number, boolean | null>([[1, false], [2, true], [3, null], [4, true], [5, false]])
    expect(gateComparison(candidate, deployed)).toMatchObject({ shared_rows: 2, wins: 1, losses: 0, p_value: 1 })
    expect(gateComparison(new Map(), deployed)).toEqual({ shared_rows: 0, wins: 0, losses: 0, p_value: 1, difference: null })
  })

  it("decides with decideGate: on 20 rows equal scores keep the deployed version under the defaults, and deploy with margin 0.2", () => {
    const same18 = verdicts("1".repeat(18) + "00")
    const equal = gateComparison(same18, same18)
    // the interval's lower bound (−0.157) is far below −0.02: 20 rows cannot show non-inferiority at the default margin
    expect(decideGate(defaultGatePolicy, equal).decision).toBe("keep")
    expect(decideGate({ ...defaultGatePolicy, margin: 0.2 }, equal).decision).toBe("deploy")
    const worse = decideGate({ ...defaultGatePolicy, margin: 0.2 }, gateComparison(verdicts("1".repeat(8) + "0".repeat(12)), same18))
    expect(worse.decision).toBe("keep")
    expect(worse.reason).toContain("significantly worse")
  })

  it("needs about 190 shared rows for identical versions to pass the default margin", () => {
    // lower bound −(1 − n/(n + z²)) > −0.02 first at n = 189 (all right on both sides)
    const all = (n: number) => verdicts("1".repeat(n))
    expect(decideGate(defaultGatePolicy, gateComparison(all(188), all(188))).decision).toBe("keep")
    expect(decideGate(defaultGatePolicy, gateComparison(all(189), all(189))).decision).toBe("deploy")
  })
})
