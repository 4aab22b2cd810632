import { Effect, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  type AutoSelectRequest,
  type AutoSelectRules,
  autoSelect,
  cheaperFirst,
  meetsLatency,
  p95Of,
  perMillionTokens,
  rulesOf,
  screenModels
} from "./AutoSelect.ts"
import type { CatalogueModel, EndpointLatency } from "./RouterCatalogue.ts"

// The use case (AutoSelection.ts) over memory leaderboards is tested in AutoSelection.test.ts.

const model = (id: string, prompt: number | null, completion: number | null, hf: string | null = null): CatalogueModel => ({
  id,
  name: `Model ${id}`,
  prompt_price: prompt,
  completion_price: completion,
  hugging_face_id: hf
})
const latency = (p90: number | null, p99: number | null): EndpointLatency => ({ p50: null, p75: null, p90, p99 })

const rules = (request: AutoSelectRequest): AutoSelectRules => Result.getOrThrow(rulesOf(request))
const invalidPath = (request: AutoSelectRequest) =>
  Result.match(rulesOf(request), { onSuccess: () => undefined, onFailure: (e) => e.path })

const run = (
  models: ReadonlyArray<CatalogueModel>,
  request: AutoSelectRequest,
  existing: ReadonlyArray<string> = [],
  latencies: Readonly<Record<string, ReadonlyArray<EndpointLatency>>> = {},
  asked: Array<string> = []
) =>
  Effect.runSync(autoSelect(models, rules(request), new Set(existing), (m) =>
    Effect.sync(() => {
      asked.push(m.id)
      return latencies[m.id] ?? []
    })))

describe("auto-select rules, by example", () => {
  it("reads the request: 3 models by default, at least 2, a limit switched on names a bound, seconds become ms", () => {
    expect(rules({})).toEqual({ count: 3, cost: null, latency: null, onlyOpenSource: false })
    expect(rules({ number_of_models: 2, limit_cost: true, input_price_per_m_tokens: 1, limit_latency: true, latency_p99_seconds: 1.5 }))
      .toEqual({ count: 2, cost: { input: 1, output: null }, latency: { p95_ms: null, p99_ms: 1500 }, onlyOpenSource: false })
    // bounds without their switch are not limits
    expect(rules({ input_price_per_m_tokens: 1, latency_p95_seconds: 1 })).toMatchObject({ cost: null, latency: null })
    expect(invalidPath({ number_of_models: 1 })).toEqual(["number_of_models"])
    expect(invalidPath({ number_of_models: 2.5 })).toEqual(["number_of_models"])
    expect(invalidPath({ limit_cost: true })).toEqual(["limit_cost"])
    expect(invalidPath({ limit_latency: true })).toEqual(["limit_latency"])
    expect(invalidPath({ input_price_per_m_tokens: -1 })).toEqual(["input_price_per_m_tokens"])
    expect(invalidPath({ latency_p99_seconds: 0 })).toEqual(["latency_p99_seconds"])
  })

  it("converts per-token prices to per-million without binary noise", () => {
    expect(perMillionTokens(0.000003)).toBe(3)
    expect(perMillionTokens(0.0000015)).toBe(1.5)
    expect(perMillionTokens(0)).toBe(0)
  })

  it("interpolates p95 at 5/9 of the way from p90 to p99, and needs both", () => {
    expect(p95Of(latency(1000, 1900))).toBe(1500)
    expect(p95Of(latency(null, 1900))).toBe(null)
    expect(p95Of(latency(1000, null))).toBe(null)
  })

  it("a model meets a latency limit through its best endpoint; without data it fails", () => {
    const limits = { p95_ms: 1500, p99_ms: 2000 }
    expect(meetsLatency([latency(1000, 1900)], limits)).toBe(true)
    expect(meetsLatency([latency(1000, 2100)], limits)).toBe(false) // p99 over
    expect(meetsLatency([latency(1400, 1999)], limits)).toBe(false) // p95 ≈ 1675
    expect(meetsLatency([latency(3000, 9000), latency(900, 1000)], limits)).toBe(true)
    expect(meetsLatency([], limits)).toBe(false)
    expect(meetsLatency([latency(null, null)], { p95_ms: null, p99_ms: 2000 })).toBe(false)
    expect(meetsLatency([latency(null, 1000)], { p95_ms: null, p99_ms: 2000 })).toBe(true)
  })

  it("counts each rejected model once, under the first rule it fails", () => {
    const catalogue = [
      model("taken/closed", 0, 0),
      model("open/pricey", 0.00001, 0.00001, "org/pricey"),
      model("closed/cheap", 0, 0),
      model("open/unpriced", null, 0, "org/unpriced"),
      model("open/variable", -1, -1, "org/variable"),
      model("open/ok", 0.000001, 0.000002, "org/ok"),
      model("open/ok", 0, 0, "org/ok") // listed twice: taken once
    ]
    const screened = screenModels(
      // the adapter turns -1 (variable price) into null
      catalogue.map((m) => m.prompt_price === -1 ? { ...m, prompt_price: null, completion_price: null } : m),
      rules({ only_open_source: true, limit_cost: true, input_price_per_m_tokens: 5 }),
      new Set(["taken/closed"])
    )
    expect(screened.eligible.map((m) => [m.id, m.input_price_per_m_tokens, m.output_price_per_m_tokens])).toEqual([
      ["open/ok", 1, 2]
    ])
    expect(screened.rejected_by).toEqual({ unstorable_text: 0, already_candidate: 2, open_source: 1, cost: 3, latency: 0, over_limit: 0 })
  })

  it("chooses the cheapest, ties by id, and names a model by its id when the catalogue gives no name", () => {
    const selection = run([
      model("c", 0.000002, 0),
      { ...model("b", 0.000001, 0.000001), name: null },
      model("a", 0.000002, 0),
      model("d", 0, 0)
    ], {})
    expect(selection.chosen.map((m) => [m.id, m.name])).toEqual([["d", "Model d"], ["a", "Model a"], ["b", "b"]])
    expect(selection).toMatchObject({ considered: 4, rejected_by: { over_limit: 1 } })
  })

  it("asks latency cheapest first, only for the places still open", () => {
    const catalogue = ["m1", "m2", "m3", "m4", "m5", "m6"].map((id, i) => model(id, i * 0.000001, 0))
    const asked: Array<string> = []
    const selection = run(
      catalogue,
      { number_of_models: 2, limit_latency: true, latency_p95_seconds: 1.5 },
      [],
      { m1: [latency(1000, 1900)], m2: [latency(2000, 2500)], m3: [], m4: [latency(100, 200)], m5: [latency(1, 2)] },
      asked
    )
    expect(selection.chosen.map((m) => m.id)).toEqual(["m1", "m4"])
    // m1, m2 first (two places); then m3 (one place); then m4
    expect(asked).toEqual(["m1", "m2", "m3", "m4"])
    expect(selection.rejected_by).toEqual({ unstorable_text: 0, already_candidate: 0, open_source: 0, cost: 0, latency: 2, over_limit: 2 })
  })

  it("adds fewer than asked when fewer pass, and none when none do", () => {
    expect(run([model("a", 0, 0)], { number_of_models: 5 }).chosen).toHaveLength(1)
    expect(run([model("a", 0, 0)], { only_open_source: true }).chosen).toEqual([])
    expect(run([], {})).toEqual({
      chosen: [],
      considered: 0,
      rejected_by: { unstorable_text: 0, already_candidate: 0, open_source: 0, cost: 0, latency: 0, over_limit: 0 }
    })
  })

  it("rejects an entry with U+0000 or a lone surrogate in any text before any other rule, and a price past a number", () => {
    const screened = screenModels([
      model("nul\u0000", 0, 0),
      { ...model("name", 0, 0), name: "half \ud83d" },
      model("hub", 0, 0, "org/\udc00"),
      model("taken\u0000", 0, 0), // would be already_candidate, but is never compared
      model("huge", 1e303, 0),
      model("pair", 0, 0, "org/😀")
    ], rules({}), new Set(["taken\u0000"]))
    expect(screened.eligible.map((m) => m.id)).toEqual(["pair"])
    expect(screened.rejected_by).toEqual({ unstorable_text: 4, already_candidate: 0, open_source: 0, cost: 1, latency: 0, over_limit: 0 })
  })
})

// Properties: any catalogue (duplicates, unpriced models, missing latency), any valid request.
const ids = fc.constantFrom(...Array.from({ length: 12 }, (_, i) => `acme/m${i}`))
const perToken = fc.option(
  fc.oneof(fc.constantFrom(0, 0.000001, 0.000003, 0.000015), fc.double({ min: 0, max: 0.0001, noNaN: true })),
  { nil: null }
)
const catalogueArb = fc.array(
  fc.record({
    id: ids,
    name: fc.option(fc.string({ maxLength: 8 }), { nil: null }),
    prompt_price: perToken,
    completion_price: perToken,
    hugging_face_id: fc.option(fc.constantFrom("", " ", "org/weights"), { nil: null })
  }),
  { maxLength: 30 }
)
const ms = fc.option(fc.integer({ min: 0, max: 5000 }), { nil: null })
const latenciesArb = fc.dictionary(
  ids,
  fc.array(fc.record({ p50: ms, p75: ms, p90: ms, p99: ms }), { maxLength: 3 })
)
const requestArb = fc.record({
  number_of_models: fc.integer({ min: 2, max: 6 }),
  limit_cost: fc.boolean(),
  input_price_per_m_tokens: fc.option(fc.double({ min: 0, max: 20, noNaN: true }), { nil: undefined }),
  output_price_per_m_tokens: fc.option(fc.double({ min: 0, max: 20, noNaN: true }), { nil: undefined }),
  limit_latency: fc.boolean(),
  latency_p95_seconds: fc.option(fc.double({ min: 0.001, max: 5, noNaN: true }), { nil: undefined }),
  latency_p99_seconds: fc.option(fc.double({ min: 0.001, max: 5, noNaN: true }), { nil: undefined }),
  only_open_source: fc.boolean()
}).filter((request) => Result.isSuccess(rulesOf(request)))

/** Every filter, written out again from the request's own words (the oracle of the properties). */
const passesEveryFilter = (
  m: CatalogueModel,
  request: typeof requestArb extends fc.Arbitrary<infer R> ? R : never,
  existing: ReadonlySet<string>,
  latencies: Readonly<Record<string, ReadonlyArray<EndpointLatency>>>
) => {
  if (existing.has(m.id) || m.prompt_price === null || m.completion_price === null) return false
  if (request.only_open_source && (m.hugging_face_id ?? "").trim() === "") return false
  if (request.limit_cost) {
    if (request.input_price_per_m_tokens !== undefined && perMillionTokens(m.prompt_price) > request.input_price_per_m_tokens) return false
    if (request.output_price_per_m_tokens !== undefined && perMillionTokens(m.completion_price) > request.output_price_per_m_tokens) {
      return false
    }
  }
  if (request.limit_latency) {
    const p95 = request.latency_p95_seconds
    const p99 = request.latency_p99_seconds
    return (latencies[m.id] ?? []).some((e) =>
      (p95 === undefined || (e.p90 !== null && e.p99 !== null && e.p90 + (e.p99 - e.p90) * 5 / 9 <= p95 * 1000)) &&
      (p99 === undefined || (e.p99 !== null && e.p99 <= p99 * 1000))
    )
  }
  return true
}

const costOf = (m: CatalogueModel) => perMillionTokens(m.prompt_price!) + perMillionTokens(m.completion_price!)

describe("auto-select rules, at their boundaries", () => {
  const invalidMessage = (request: AutoSelectRequest) =>
    Result.match(rulesOf(request), { onSuccess: () => undefined, onFailure: (e) => e.message })

  it("a free model is priced, a bound on one price is enough, and each refusal says why", () => {
    expect(rules({ input_price_per_m_tokens: 0, output_price_per_m_tokens: 0 })).toMatchObject({ cost: null })
    expect(rules({ limit_cost: true, output_price_per_m_tokens: 0 })).toMatchObject({ cost: { input: null, output: 0 } })
    expect(rules({ limit_cost: true, input_price_per_m_tokens: 2 })).toMatchObject({ cost: { input: 2, output: null } })
    expect(rules({ limit_latency: true, latency_p95_seconds: 0.5 })).toMatchObject({ latency: { p95_ms: 500, p99_ms: null } })
    expect([
      invalidMessage({ number_of_models: 1 }),
      invalidMessage({ output_price_per_m_tokens: -0.5 }),
      invalidMessage({ latency_p95_seconds: 0 }),
      invalidMessage({ limit_cost: true }),
      invalidMessage({ limit_latency: true })
    ]).toEqual([
      "number_of_models must be an integer of at least 2",
      "output_price_per_m_tokens must be a number of at least 0",
      "latency_p95_seconds must be a number greater than 0",
      "limit_cost needs input_price_per_m_tokens or output_price_per_m_tokens",
      "limit_latency needs latency_p95_seconds or latency_p99_seconds"
    ])
  })

  it("a price or a latency equal to its bound passes", () => {
    const screened = screenModels([model("at", 0.000001, 0.000002), model("over", 0.000001, 0.0000021)], rules({
      limit_cost: true,
      input_price_per_m_tokens: 1,
      output_price_per_m_tokens: 2
    }), new Set())
    expect(screened.eligible.map((m) => m.id)).toEqual(["at"])
    // a bound on one price leaves the other free
    const expensive = [model("dear input", 0.00005, 0.000001), model("dear output", 0.000001, 0.00005)]
    const onOutput = screenModels(expensive, rules({ limit_cost: true, output_price_per_m_tokens: 1 }), new Set())
    const onInput = screenModels(expensive, rules({ limit_cost: true, input_price_per_m_tokens: 1 }), new Set())
    expect([onOutput.eligible.map((m) => m.id), onInput.eligible.map((m) => m.id)]).toEqual([["dear input"], ["dear output"]])
    const limits = { p95_ms: null, p99_ms: 900 }
    expect([meetsLatency([latency(100, 900)], limits), meetsLatency([latency(100, 901)], limits)]).toEqual([true, false])
    // a p95 bound needs p90 as well as p99: without it the model fails
    expect(meetsLatency([latency(null, 100)], { p95_ms: 1000, p99_ms: null })).toBe(false)
  })

  it("orders equal prices by id, both ways", () => {
    const priced = (id: string) => ({ id, name: id, input_price_per_m_tokens: 2, output_price_per_m_tokens: 1, open_source: false })
    const [a, c] = [priced("a"), priced("c")]
    expect([cheaperFirst(a, c) < 0, cheaperFirst(c, a) > 0, cheaperFirst(a, a)]).toEqual([true, true, 0])
  })

  it("a blank catalogue name is no name", () => {
    expect(screenModels([{ ...model("m", 0, 0), name: "  " }], rules({}), new Set()).eligible.map((m) => m.name)).toEqual(["m"])
  })
})

describe("auto-select rules, as properties", () => {
  const scenario = fc.record({
    catalogue: catalogueArb,
    request: requestArb,
    existing: fc.uniqueArray(ids, { maxLength: 4 }),
    latencies: latenciesArb
  })

  it("never adds more than number_of_models, nor a model twice, nor one already a candidate; every model is counted once", () => {
    fc.assert(fc.property(scenario, ({ catalogue, existing, latencies, request }) => {
      const selection = run(catalogue, request, existing, latencies)
      const chosen = selection.chosen.map((m) => m.id)
      expect(chosen.length).toBeLessThanOrEqual(request.number_of_models)
      expect(new Set(chosen).size).toBe(chosen.length)
      for (const id of chosen) expect(existing).not.toContain(id)
      const rejected = Object.values(selection.rejected_by).reduce((a, b) => a + b, 0)
      expect(selection.considered).toBe(catalogue.length)
      expect(chosen.length + rejected).toBe(catalogue.length)
    }))
  })

  it("every model added passes every active filter, with the catalogue's prices per million", () => {
    fc.assert(fc.property(scenario, ({ catalogue, existing, latencies, request }) => {
      const selection = run(catalogue, request, existing, latencies)
      for (const chosen of selection.chosen) {
        const listed = catalogue.find((m) => m.id === chosen.id)!
        expect(passesEveryFilter(listed, request, new Set(existing), latencies)).toBe(true)
        expect(chosen.input_price_per_m_tokens).toBe(perMillionTokens(listed.prompt_price!))
        expect(chosen.output_price_per_m_tokens).toBe(perMillionTokens(listed.completion_price!))
      }
    }))
  })

  it("adds the cheapest that pass, cheapest first; fewer only when no other passes", () => {
    fc.assert(fc.property(scenario, ({ catalogue, existing, latencies, request }) => {
      const selection = run(catalogue, request, existing, latencies)
      const chosen = selection.chosen.map((m) => catalogue.find((c) => c.id === m.id)!)
      for (let i = 1; i < chosen.length; i++) {
        const [before, after] = [chosen[i - 1]!, chosen[i]!]
        expect(costOf(before) < costOf(after) || (costOf(before) === costOf(after) && before.id < after.id)).toBe(true)
      }
      const firstListings = catalogue.filter((m, i) => catalogue.findIndex((c) => c.id === m.id) === i)
      const passingLeftOut = firstListings.filter((m) =>
        !chosen.some((c) => c.id === m.id) && passesEveryFilter(m, request, new Set(existing), latencies)
      )
      if (chosen.length < request.number_of_models) expect(passingLeftOut).toEqual([])
      const last = chosen.at(-1)
      for (const m of passingLeftOut) {
        expect(costOf(m) > costOf(last!) || (costOf(m) === costOf(last!) && m.id > last!.id)).toBe(true)
      }
    }))
  })
})
