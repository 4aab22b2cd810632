import { Result, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  applyServingPolicyPatch,
  decideServing,
  defaultServingPolicy,
  type ServingCandidate,
  ServingDecision,
  type ServingInput,
  type ServingPair,
  ServingPolicy
} from "./ServingPolicy.ts"

const candidate = (id: string, score: number | null, cost_per_call: number | null = null): ServingCandidate =>
  ({ id, name: id, score, cost_per_call })

const pair = (a: string, b: string, fields: Partial<Omit<ServingPair, "a" | "b">>): ServingPair => ({
  a,
  b,
  shared_rows: 0,
  wins: 0,
  losses: 0,
  p_adjusted: null,
  difference: null,
  ...fields
})

const noTies = () => []

const decide = (input: Partial<ServingInput>) =>
  decideServing({ policy: defaultServingPolicy, serving: null, candidates: [], pairs: [], tiedWith: noTies, ...input })

describe("applyServingPolicyPatch", () => {
  const applied = (patch: Parameters<typeof applyServingPolicyPatch>[1], at?: ReadonlyArray<string>) =>
    applyServingPolicyPatch(defaultServingPolicy, patch, at)
  const refused = (patch: Parameters<typeof applyServingPolicyPatch>[1], at?: ReadonlyArray<string>) => {
    const result = applied(patch, at)
    if (Result.isSuccess(result)) throw new Error("expected InvalidInput")
    return { tag: result.failure._tag, path: result.failure.path, message: result.failure.message }
  }

  it("changes what the patch sends and keeps the rest", () => {
    expect(Result.getOrThrow(applied({}))).toEqual(defaultServingPolicy)
    expect(Result.getOrThrow(applied({ alpha: 0.01, switch_when: "non_inferior_and_cheaper" }))).toEqual({
      alpha: 0.01,
      min_rows: 30,
      switch_when: "non_inferior_and_cheaper",
      margin: 0.02
    })
    expect(Result.getOrThrow(applied({ min_rows: 1, margin: 0 }))).toEqual({ ...defaultServingPolicy, min_rows: 1, margin: 0 })
  })

  it("names the field that is out of range", () => {
    for (const alpha of [0, 1, -0.1, 1.5, Number.NaN]) {
      expect(refused({ alpha })).toMatchObject({ tag: "InvalidInput", path: ["alpha"] })
    }
    for (const min_rows of [0, -3, 2.5, Number.NaN]) {
      expect(refused({ min_rows })).toMatchObject({ tag: "InvalidInput", path: ["min_rows"] })
    }
    for (const margin of [1, -0.01, 2, Number.NaN]) {
      expect(refused({ margin })).toMatchObject({ tag: "InvalidInput", path: ["margin"] })
    }
    expect(refused({ alpha: 1 }).message).toBe("alpha must be a number strictly between 0 and 1 (got 1)")
    expect(refused({ margin: 0.5, min_rows: 0 }, ["serving_policy"]).path).toEqual(["serving_policy", "min_rows"])
  })

  it("agrees with the schema on every patch it accepts", () => {
    const anyNumber = fc.oneof(fc.double({ min: -2, max: 2, noNaN: true }), fc.integer({ min: -5, max: 100 }))
    fc.assert(fc.property(
      fc.record({ alpha: anyNumber, min_rows: anyNumber, margin: anyNumber }, { requiredKeys: [] }),
      (patch) => {
        const result = applied(patch)
        const decoded = Schema.decodeUnknownResult(ServingPolicy)({ ...defaultServingPolicy, ...patch })
        expect(Result.isSuccess(result)).toBe(Result.isSuccess(decoded))
      }
    ))
  })
})

describe("decideServing: nothing serves yet", () => {
  it("serves the best score when nothing is tied with it", () => {
    const decision = decide({ candidates: [candidate("a", 0.9, 0.01), candidate("b", 0.7, 0.001)] })
    expect(decision).toEqual({
      action: "first",
      from_candidate_id: null,
      to_candidate_id: "a",
      reason: "first to serve: a has the best score 0.9",
      shared_rows: 0,
      p_value: null,
      difference: null,
      chosen_among_ties: false
    })
    expect(Schema.is(ServingDecision)(decision)).toBe(true)
  })

  it("takes the cheapest among the candidates tied with the best, known cost before unknown", () => {
    const candidates = [candidate("best", 0.9, 0.02), candidate("dear", 0.88, 0.05), candidate("cheap", 0.86, 0.001), candidate("unpriced", 0.85)]
    const tiedWith = (id: string) => id === "best" ? ["dear", "cheap", "unpriced"] : []
    const pairs = [pair("best", "cheap", { shared_rows: 50, wins: 4, losses: 2, p_adjusted: 1, difference: { estimate: 0.04, low: -0.05, high: 0.13 } })]
    const decision = decide({ candidates, tiedWith, pairs })
    expect(decision).toEqual({
      action: "first",
      from_candidate_id: null,
      to_candidate_id: "cheap",
      reason: "first to serve: cheap (score 0.86, 0.001 per call) is the cheapest of the 4 candidates statistically tied with the best, best (score 0.9, 0.02 per call)",
      shared_rows: 50,
      p_value: 1,
      // cheap minus best: the pair was given as best minus cheap
      difference: { estimate: -0.04, low: -0.13, high: 0.05 },
      chosen_among_ties: true
    })
  })

  it("prefers a known cost to an unknown one, and on equal costs the ranked order", () => {
    const unknownBest = [candidate("best", 0.9), candidate("priced", 0.8, 0.5)]
    expect(decide({ candidates: unknownBest, tiedWith: () => ["priced"] }).to_candidate_id).toBe("priced")
    const equal = [candidate("best", 0.9, 0.1), candidate("second", 0.9, 0.1), candidate("third", 0.8, 0.1)]
    const decision = decide({ candidates: equal, tiedWith: () => ["third", "second"] })
    expect(decision.to_candidate_id).toBe("best")
    expect(decision.chosen_among_ties).toBe(true)
    expect(decision.reason).toBe("first to serve: best has the best score 0.9 and is the cheapest (0.1 per call) of the 3 candidates statistically tied with it")
  })

  it("ignores tied ids that have no score or are not candidates", () => {
    const decision = decide({ candidates: [candidate("a", 0.5, 1), candidate("b", null, 0.001)], tiedWith: () => ["b", "gone"] })
    expect(decision.to_candidate_id).toBe("a")
    expect(decision.chosen_among_ties).toBe(false)
  })

  it("decides nothing when no candidate has a score", () => {
    expect(decide({ candidates: [candidate("a", null), candidate("b", null)] })).toEqual({
      action: "none",
      from_candidate_id: null,
      to_candidate_id: null,
      reason: "nothing serves: no candidate has a score",
      shared_rows: 0,
      p_value: null,
      difference: null,
      chosen_among_ties: false
    })
  })

  it("treats a serving candidate that was removed as nothing serving", () => {
    const decision = decide({ serving: "gone", candidates: [candidate("b", 0.4), candidate("a", 0.6)] })
    expect(decision.action).toBe("first")
    expect(decision.from_candidate_id).toBeNull()
    expect(decision.to_candidate_id).toBe("a")
    expect(decision.reason).toBe("first to serve: a has the best score 0.6 (the serving candidate gone is no longer on the leaderboard)")
  })
})

describe("decideServing: something serves", () => {
  // The cases. Exact McNemar p (two-sided) from scipy.stats.binomtest(wins, wins + losses, 0.5):
  // 2 vs 0 discordant rows -> 0.5; 70 vs 10 -> 3.161290522649495e-12. With two candidates Holm changes nothing.
  const local = candidate("local-llama", 0.6, 0.0001)
  const acme = candidate("acme-small", 0.9, 0.002)

  it("keeps the serving candidate on 4 rows, 2 of 4 right against 0 of 4", () => {
    const decision = decide({
      serving: "local-llama",
      candidates: [candidate("acme-small", 0.5), candidate("local-llama", 0)],
      pairs: [pair("acme-small", "local-llama", { shared_rows: 4, wins: 2, losses: 0, p_adjusted: 0.5, difference: { estimate: 0.5, low: -0.1, high: 1 } })]
    })
    expect(decision).toEqual({
      action: "keep",
      from_candidate_id: "local-llama",
      to_candidate_id: "local-llama",
      reason: "kept local-llama: acme-small is not significantly better, p = 0.5 on 4 shared rows, 30 needed",
      shared_rows: 4,
      p_value: 0.5,
      difference: { estimate: 0.5, low: -0.1, high: 1 },
      chosen_among_ties: false
    })
  })

  it("switches on 200 rows, 180 right against 120 (70 rows one way, 10 the other)", () => {
    const decision = decide({
      serving: "local-llama",
      candidates: [acme, local],
      pairs: [pair("local-llama", "acme-small", { shared_rows: 200, wins: 10, losses: 70, p_adjusted: 3.161290522649495e-12, difference: { estimate: -0.3, low: -0.37, high: -0.23 } })]
    })
    expect(decision).toEqual({
      action: "switch",
      from_candidate_id: "local-llama",
      to_candidate_id: "acme-small",
      reason: "switched to acme-small from local-llama: acme-small is right on 70 rows where local-llama is wrong and wrong on 10 where local-llama is right, p < 0.0001 (alpha 0.05) on 200 shared rows",
      shared_rows: 200,
      p_value: 3.161290522649495e-12,
      difference: { estimate: 0.3, low: 0.23, high: 0.37 },
      chosen_among_ties: false
    })
  })

  const significance = (fields: Partial<Omit<ServingPair, "a" | "b">>, policy = defaultServingPolicy) =>
    decide({ policy, serving: "local-llama", candidates: [acme, local], pairs: [pair("acme-small", "local-llama", fields)] })

  it("writes p with two significant digits against alpha", () => {
    expect(significance({ shared_rows: 120, wins: 30, losses: 12, p_adjusted: 0.0081234 }).reason).toBe(
      "switched to acme-small from local-llama: acme-small is right on 30 rows where local-llama is wrong and wrong on 12 where local-llama is right, p = 0.0081 < 0.05 on 120 shared rows"
    )
    expect(significance({ shared_rows: 120, wins: 3, losses: 1, p_adjusted: 0.3125 }).reason).toBe(
      "kept local-llama: acme-small is not significantly better, p = 0.31 ≥ 0.05 on 120 shared rows"
    )
  })

  it("keeps on p exactly alpha, on an unknown p, and on a significant result in the serving one's favour", () => {
    expect(significance({ shared_rows: 100, wins: 20, losses: 5, p_adjusted: 0.05 }).action).toBe("keep")
    expect(significance({ shared_rows: 100, wins: 20, losses: 5, p_adjusted: null }).reason).toBe(
      "kept local-llama: acme-small is not significantly better, p unknown on 100 shared rows"
    )
    expect(significance({ shared_rows: 100, wins: 5, losses: 20, p_adjusted: 0.004 }).reason).toBe(
      "kept local-llama: acme-small is not better: acme-small is right on 5 rows where local-llama is wrong and wrong on 20 where local-llama is right, p = 0.004 on 100 shared rows"
    )
  })

  it("switches at exactly min_rows and not one row below", () => {
    const policy = { ...defaultServingPolicy, min_rows: 40 }
    expect(significance({ shared_rows: 40, wins: 15, losses: 1, p_adjusted: 0.001 }, policy).action).toBe("switch")
    expect(significance({ shared_rows: 39, wins: 15, losses: 1, p_adjusted: 0.001 }, policy).reason).toBe(
      "kept local-llama: acme-small is not significantly better, p = 0.001 on 39 shared rows, 40 needed"
    )
  })

  it("keeps with no pair between the two", () => {
    expect(decide({ serving: "local-llama", candidates: [acme, local] })).toMatchObject({
      action: "keep",
      reason: "kept local-llama: acme-small is not significantly better, p unknown on 0 shared rows, 30 needed",
      shared_rows: 0
    })
  })

  it("keeps the serving candidate while it is still the best", () => {
    expect(decide({ serving: "acme-small", candidates: [acme, local] })).toMatchObject({
      action: "keep",
      from_candidate_id: "acme-small",
      to_candidate_id: "acme-small",
      reason: "kept acme-small: it is still the best (score 0.9)"
    })
    expect(decide({ serving: "acme-small", candidates: [acme, candidate("x", null)] }).reason).toBe(
      "kept acme-small: it is still the best (score 0.9)"
    )
    expect(decide({ serving: "local-llama", candidates: [candidate("x", null), candidate("local-llama", null)] }).reason).toBe(
      "kept local-llama: no other candidate has a score"
    )
  })

  it("challenges with the top-ranked candidate other than the serving one", () => {
    const decision = decide({
      serving: "local-llama",
      candidates: [acme, candidate("mid", 0.7), local],
      pairs: [
        pair("mid", "local-llama", { shared_rows: 300, wins: 90, losses: 1, p_adjusted: 0.000001 }),
        pair("acme-small", "local-llama", { shared_rows: 10, wins: 9, losses: 0, p_adjusted: 0.004 })
      ]
    })
    expect(decision).toMatchObject({ action: "keep", shared_rows: 10, p_value: 0.004 })
  })

  describe("non_inferior_and_cheaper", () => {
    const policy = { ...defaultServingPolicy, switch_when: "non_inferior_and_cheaper" as const }
    const cheapAcme = candidate("acme-small", 0.9, 0.00005)
    const challenge = (difference: ServingPair["difference"], fields: Partial<ServingPair> = {}, challenger = cheapAcme) =>
      decide({
        policy,
        serving: "local-llama",
        candidates: [challenger, local],
        pairs: [pair("acme-small", "local-llama", { shared_rows: 200, wins: 30, losses: 28, p_adjusted: 0.9, difference, ...fields })]
      })

    it("switches to a non-inferior, cheaper challenger without significance", () => {
      expect(challenge({ estimate: 0.01, low: -0.019, high: 0.04 })).toMatchObject({
        action: "switch",
        to_candidate_id: "acme-small",
        reason: "switched to acme-small from local-llama: acme-small is non-inferior (difference 0.01, interval [-0.019, 0.04], lower bound above -0.02) and cheaper (0.00005 per call against 0.0001 per call) on 200 shared rows"
      })
    })

    it("keeps when the lower bound reaches -margin", () => {
      expect(challenge({ estimate: 0.01, low: -0.02, high: 0.04 }).reason).toBe(
        "kept local-llama: acme-small may be worse by more than the margin: difference 0.01, interval [-0.02, 0.04], lower bound not above -0.02, on 200 shared rows"
      )
    })

    it("keeps when the challenger is not cheaper or a cost is unknown", () => {
      expect(challenge({ estimate: 0.05, low: 0.01, high: 0.09 }, {}, acme).reason).toBe(
        "kept local-llama: acme-small is non-inferior on 200 shared rows but not cheaper (0.002 per call against 0.0001 per call)"
      )
      expect(challenge({ estimate: 0.05, low: 0.01, high: 0.09 }, {}, candidate("acme-small", 0.9)).reason).toBe(
        "kept local-llama: acme-small is non-inferior on 200 shared rows but its cost cannot be compared (unknown against 0.0001 per call)"
      )
    })

    it("keeps on too few rows or no measured difference", () => {
      expect(challenge({ estimate: 0.01, low: 0, high: 0.02 }, { shared_rows: 29 }).reason).toBe(
        "kept local-llama: acme-small is not shown non-inferior: difference 0.01, interval [0, 0.02] on 29 shared rows, 30 needed"
      )
      expect(challenge(null).reason).toBe("kept local-llama: acme-small is not shown non-inferior: no difference measured on 200 shared rows")
    })

    it("mirrors the interval of a pair given the other way round", () => {
      const decision = decide({
        policy,
        serving: "local-llama",
        candidates: [cheapAcme, local],
        pairs: [pair("local-llama", "acme-small", { shared_rows: 200, wins: 28, losses: 30, p_adjusted: 0.9, difference: { estimate: -0.01, low: -0.04, high: 0.019 } })]
      })
      expect(decision).toMatchObject({ action: "switch", difference: { estimate: 0.01, low: -0.019, high: 0.04 } })
    })
  })
})

describe("decideServing: properties", () => {
  const ids = ["c0", "c1", "c2", "c3", "c4"]
  const difference = fc.tuple(fc.double({ min: -1, max: 1, noNaN: true }), fc.double({ min: 0, max: 0.5, noNaN: true }), fc.double({ min: 0, max: 0.5, noNaN: true }))
    .map(([estimate, below, above]) => ({ estimate, low: estimate - below, high: estimate + above }))
  const pairFor = (a: string, b: string) =>
    fc.record({
      shared_rows: fc.integer({ min: 0, max: 100 }),
      wins: fc.integer({ min: 0, max: 50 }),
      losses: fc.integer({ min: 0, max: 50 }),
      p_adjusted: fc.option(fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0.01, 0.05, 0.2)), { nil: null }),
      difference: fc.option(difference, { nil: null }),
      flip: fc.boolean()
    }).map(({ flip, ...fields }): ServingPair => flip ? { a: b, b: a, ...fields } : { a, b, ...fields })
  const input: fc.Arbitrary<ServingInput> = fc.integer({ min: 1, max: 5 }).chain((n) => {
    const present = ids.slice(0, n)
    const unordered = present.flatMap((a, i) => present.slice(i + 1).map((b) => [a, b] as const))
    return fc.record({
      policy: fc.record({
        alpha: fc.constantFrom(0.01, 0.05, 0.2),
        min_rows: fc.integer({ min: 1, max: 60 }),
        switch_when: fc.constantFrom("significantly_better" as const, "non_inferior_and_cheaper" as const),
        margin: fc.constantFrom(0, 0.02, 0.1)
      }),
      serving: fc.constantFrom(null, "gone", ...present),
      candidates: fc.tuple(...present.map((id) =>
        fc.record({
          score: fc.option(fc.constantFrom(0, 0.25, 0.5, 0.75, 1), { nil: null }),
          cost_per_call: fc.option(fc.constantFrom(0.001, 0.01, 0.1), { nil: null })
        }).map((c): ServingCandidate => ({ id, name: id, ...c }))
      )).map((cs) => [...cs].sort((x, y) => (y.score ?? -1) - (x.score ?? -1))),
      pairs: fc.tuple(...unordered.map(([a, b]) => pairFor(a, b))),
      ties: unordered.length === 0
        ? fc.constant<ReadonlyArray<readonly [string, string]>>([])
        : fc.array(fc.constantFrom(...unordered), { maxLength: unordered.length })
    }).map(({ ties, ...rest }) => ({
      ...rest,
      tiedWith: (id: string) => ties.flatMap(([a, b]) => a === id ? [b] : b === id ? [a] : [])
    }))
  })

  /** The pair as given, read as x against y. */
  const rawPair = (pairs: ReadonlyArray<ServingPair>, x: string, y: string) => {
    const given = pairs.find((p) => (p.a === x && p.b === y) || (p.a === y && p.b === x))
    if (given === undefined) return undefined
    return given.a === x ? given : { ...given, wins: given.losses, losses: given.wins }
  }

  it("never switches on fewer than min_rows shared rows, or at p >= alpha under significantly_better", () => {
    const switches = { significantly_better: 0, non_inferior_and_cheaper: 0 }
    fc.assert(fc.property(input, (i) => {
      const decision = decideServing(i)
      if (decision.action !== "switch") return
      switches[i.policy.switch_when] += 1
      const given = rawPair(i.pairs, decision.to_candidate_id ?? "", decision.from_candidate_id ?? "")
      expect(given).toBeDefined()
      expect(given!.shared_rows).toBeGreaterThanOrEqual(i.policy.min_rows)
      if (i.policy.switch_when === "significantly_better") {
        expect(given!.p_adjusted).not.toBeNull()
        expect(given!.p_adjusted!).toBeLessThan(i.policy.alpha)
        expect(given!.wins).toBeGreaterThan(given!.losses)
      } else {
        const to = i.candidates.find((c) => c.id === decision.to_candidate_id)!
        const from = i.candidates.find((c) => c.id === decision.from_candidate_id)!
        expect(to.cost_per_call).not.toBeNull()
        expect(to.cost_per_call!).toBeLessThan(from.cost_per_call!)
      }
    }), { numRuns: 2000 })
    // The inputs do reach both kinds of switch, so the checks above ran.
    expect(switches.significantly_better).toBeGreaterThan(0)
    expect(switches.non_inferior_and_cheaper).toBeGreaterThan(0)
  })

  it("decides the same whichever way each pair is given", () => {
    fc.assert(fc.property(input, fc.array(fc.boolean(), { minLength: 10, maxLength: 10 }), (i, flips) => {
      const flipped = i.pairs.map((p, k): ServingPair =>
        flips[k]
          ? {
            a: p.b,
            b: p.a,
            shared_rows: p.shared_rows,
            wins: p.losses,
            losses: p.wins,
            p_adjusted: p.p_adjusted,
            difference: p.difference === null ? null : { estimate: -p.difference.estimate, low: -p.difference.high, high: -p.difference.low }
          }
          : p
      )
      expect(decideServing({ ...i, pairs: flipped })).toEqual(decideServing(i))
    }), { numRuns: 1000 })
  })

  it("first always serves a candidate with a score, the best or one tied with it; none only without any score", () => {
    fc.assert(fc.property(input, (i) => {
      const decision = decideServing(i)
      const servingPresent = i.candidates.some((c) => c.id === i.serving)
      const scored = i.candidates.filter((c) => c.score !== null)
      if (!servingPresent) {
        expect(decision.action).toBe(scored.length === 0 ? "none" : "first")
      } else {
        expect(["keep", "switch"]).toContain(decision.action)
      }
      if (decision.action !== "first") return
      const chosen = i.candidates.find((c) => c.id === decision.to_candidate_id)
      expect(chosen?.score).not.toBeNull()
      const top = Math.max(...scored.map((c) => c.score!))
      const best = scored.find((c) => c.score === top)!
      expect(chosen === best || i.tiedWith(best.id).includes(chosen!.id)).toBe(true)
      expect(decision.chosen_among_ties).toBe(i.tiedWith(best.id).some((id) => id !== best.id && scored.some((c) => c.id === id)))
    }), { numRuns: 2000 })
  })

  it("always answers a decision the schema accepts", () => {
    fc.assert(fc.property(input, (i) => {
      expect(Schema.is(ServingDecision)(decideServing(i))).toBe(true)
    }), { numRuns: 500 })
  })
})
