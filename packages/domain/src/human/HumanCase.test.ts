import { DateTime, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { configurationOf, createCase, creationKey, generationMessages, type HumanCase, slotsFor } from "./HumanCase.ts"
import { type CaseResponse, reviewState, type Slot } from "./CaseStage.ts"
import { claim, complete, saveConfig, saveReview } from "./CaseLifecycle.ts"
import { blindFailure, reviewerView } from "./ReviewerView.ts"
import { CaseId } from "./HumanEval.ts"
import { ResponseId } from "./HumanEval.ts"
import { WorkspaceId } from "../shared/index.ts"
import { LeaderboardId } from "../leaderboards/index.ts"
import { CandidateId } from "../leaderboards/index.ts"

const t0 = DateTime.makeUnsafe("2026-11-22T10:00:00.000Z")
const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`
const candidates = [101, 102, 103].map((n) => ({
  id: CandidateId.make(uuid(n)),
  name: `model ${n}`,
  platform: "Router" as const,
  model_name: `vendor/model-${n}`
}))
const responseIds = [uuid(201), uuid(202), uuid(203)] as Array<ResponseId>
const configuration = "config-1"

const draft = (): HumanCase =>
  Result.getOrThrow(createCase({
    id: CaseId.make(uuid(1)),
    input: "What is the refund window?",
    context: "Order 123",
    prompt_override: null,
    leaderboardId: LeaderboardId.make(uuid(2)),
    workspaceId: WorkspaceId.make(uuid(3)),
    basePrompt: "Answer briefly.",
    attachments: [],
    configuration,
    now: t0
  }))

const answered = (slots: ReadonlyArray<Slot>, failed: ReadonlySet<number>) =>
  slots.map((slot, i): CaseResponse => ({
    ...slot,
    status: failed.has(i) ? "failed" : "succeeded",
    output: failed.has(i) ? null : `answer ${i}`,
    error: failed.has(i) ? "the endpoint answered 500" : null,
    latency_ms: 12,
    usage: null,
    cost_usd: failed.has(i) ? null : 0.001,
    trace_id: null,
    created_at: t0
  }))

/** One step a client (or the generation) may take, with its inputs drawn at random. */
type Op =
  | { readonly op: "config"; readonly revisionOffset: number; readonly prompt: string | null }
  | { readonly op: "claim"; readonly sameConfiguration: boolean }
  | { readonly op: "complete"; readonly rightClaim: boolean; readonly failed: ReadonlyArray<boolean> }
  | { readonly op: "review"; readonly revisionOffset: number; readonly confirm: boolean; readonly verdicts: ReadonlyArray<number>; readonly stray: boolean }

/** Mostly well-formed steps, so that most runs get as far as reviews; the rest probe the refusals. */
const mostly = fc.integer({ min: 0, max: 3 }).map((n) => n !== 0)
const revisionOffset = fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, { arbitrary: fc.constantFrom(-1, 1), weight: 1 })
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant("config" as const), revisionOffset, prompt: fc.option(fc.string({ maxLength: 5 }), { nil: null }) }),
  fc.record({ op: fc.constant("claim" as const), sameConfiguration: mostly }),
  fc.record({ op: fc.constant("complete" as const), rightClaim: mostly, failed: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }) }),
  { arbitrary: fc.record({
    op: fc.constant("review" as const),
    revisionOffset,
    confirm: fc.boolean(),
    // per response: 0 none, 1 correct, 2 incorrect, 3 abstain
    verdicts: fc.array(fc.oneof({ arbitrary: fc.constant(0), weight: 1 }, { arbitrary: fc.integer({ min: 1, max: 3 }), weight: 6 }), {
      minLength: 3,
      maxLength: 3
    }),
    stray: mostly.map((b) => !b)
  }), weight: 3 }
)

const failureOf = <A, E>(result: Result.Result<A, E>): E | undefined => (Result.isFailure(result) ? result.failure : undefined)

const apply = (c: HumanCase, o: Op, step: number): Result.Result<HumanCase, unknown> => {
  const now = DateTime.add(t0, { seconds: step + 1 })
  switch (o.op) {
    case "config":
      return saveConfig(c, { revision: c.revision + o.revisionOffset, prompt_override: o.prompt, basePrompt: "Answer briefly." }, now)
    case "claim":
      return claim(c, {
        configuration: o.sameConfiguration ? configuration : "config-2",
        claimId: `claim-${step}`,
        slots: slotsFor(candidates, responseIds, [2, 0, 1])
      }, now)
    case "complete": {
      const claimId = c.stage._tag === "Generating" && o.rightClaim ? c.stage.claim_id : "someone-else"
      const slots = c.stage._tag === "Generating" ? c.stage.slots : slotsFor(candidates, responseIds, [0, 1, 2])
      const failed = new Set(o.failed.flatMap((f, i) => (f ? [i] : [])))
      return complete(c, { claimId, responses: answered(slots, failed) }, now)
    }
    case "review": {
      const names = ["", "correct", "incorrect", "abstain"] as const
      const verdicts: Record<string, "correct" | "incorrect" | "abstain"> = {}
      o.verdicts.forEach((v, i) => {
        if (v !== 0) verdicts[responseIds[i]!] = names[v] as "correct" | "incorrect" | "abstain"
      })
      if (o.stray) verdicts[uuid(999)] = "correct"
      return saveReview(c, {
        revision: c.revision + o.revisionOffset,
        confirm: o.confirm,
        review: { verdicts, reference: "ref", notes: "" }
      }, now)
    }
  }
}

describe("the human case lifecycle", () => {
  it("never breaks part 3's table, whatever clients and generations do", () => {
    fc.assert(fc.property(fc.array(op, { minLength: 3, maxLength: 25 }), (ops) => {
      let c = draft()
      ops.forEach((o, step) => {
        const before = c
        const result = apply(c, o, step)
        if (Result.isFailure(result)) return // a refused step changes nothing: `c` stays as it was
        const after = result.success
        // revisions strictly increase, one per accepted change
        expect(after.revision).toBe(before.revision + 1)
        // no edit after generation: the configuration-bearing fields change only while a draft
        if (before.stage._tag !== "Draft") {
          expect(o.op).not.toBe("config")
          expect([after.prompt, after.prompt_override, after.input, after.context, after.configuration])
            .toEqual([before.prompt, before.prompt_override, before.input, before.context, before.configuration])
        }
        // responses never change once generated
        if (before.stage._tag === "Generated" && after.stage._tag === "Generated") {
          expect(after.stage.responses).toEqual(before.stage.responses)
          if (before.stage.revealed_at !== null) expect(after.stage.revealed_at).toEqual(before.stage.revealed_at)
        }
        // stages only move forward
        const order: Record<string, number> = { Draft: 0, Generating: 1, Generated: 2 }
        expect(order[after.stage._tag]!).toBeGreaterThanOrEqual(order[before.stage._tag]!)
        // a confirmed review has complete verdicts: every succeeded response, no failed one
        if (after.stage._tag === "Generated" && after.stage.review._tag === "Confirmed") {
          const verdicts = after.stage.review.verdicts
          for (const r of after.stage.responses) {
            expect(verdicts[r.response_id] !== undefined).toBe(r.status === "succeeded")
          }
          expect(Object.keys(verdicts).length).toBe(after.stage.responses.filter((r: CaseResponse) => r.status === "succeeded").length)
          expect(after.stage.revealed_at).not.toBeNull()
        }
        c = after
      })
    }), { numRuns: 500 })
  })

  it("refuses with the error the contract names", () => {
    const c = draft()
    expect(failureOf(saveConfig(c, { revision: 7, prompt_override: "x", basePrompt: "" }, t0))).toMatchObject({ _tag: "StaleRevision", current_revision: 1 })
    expect(failureOf(claim(c, { configuration: "other", claimId: "k", slots: [] }, t0))).toMatchObject({ _tag: "ConfigurationChanged" })
    const generating = Result.getOrThrow(claim(c, { configuration, claimId: "k", slots: slotsFor(candidates, responseIds, [0, 1, 2]) }, t0))
    expect(failureOf(claim(generating, { configuration, claimId: "k2", slots: [] }, t0))).toMatchObject({ _tag: "GenerationInProgress" })
    expect(failureOf(saveConfig(generating, { revision: 2, prompt_override: null, basePrompt: "" }, t0))).toMatchObject({ _tag: "GenerationInProgress" })
    expect(failureOf(saveReview(c, { revision: 1, confirm: false, review: { verdicts: {}, reference: "", notes: "" } }, t0))).toMatchObject({ _tag: "CaseNotGenerated" })
    const slots = generating.stage._tag === "Generating" ? generating.stage.slots : []
    const generated = Result.getOrThrow(complete(generating, { claimId: "k", responses: answered(slots, new Set([1])) }, t0))
    expect(failureOf(claim(generated, { configuration, claimId: "k3", slots: [] }, t0))).toMatchObject({ _tag: "ImmutableCase" })
    expect(failureOf(saveConfig(generated, { revision: 3, prompt_override: null, basePrompt: "" }, t0))).toMatchObject({ _tag: "ImmutableCase" })
    const failedId = slots[1]!.response_id
    const onFailed = saveReview(generated, { revision: 3, confirm: false, review: { verdicts: { [failedId]: "correct" }, reference: "", notes: "" } }, t0)
    expect(failureOf(onFailed)).toMatchObject({ _tag: "InvalidVerdicts", response_ids: [failedId] })
    const incomplete = saveReview(generated, { revision: 3, confirm: true, review: { verdicts: { [slots[0]!.response_id]: "correct" }, reference: "", notes: "" } }, t0)
    expect(failureOf(incomplete)).toMatchObject({ _tag: "InvalidVerdicts", response_ids: [slots[2]!.response_id] })
    const tooLong = saveReview(generated, { revision: 3, confirm: false, review: { verdicts: {}, reference: "x".repeat(32_001), notes: "" } }, t0)
    expect(failureOf(tooLong)).toMatchObject({ _tag: "InvalidInput", path: ["review.reference"] })
  })

  it("a draft review after confirmation withdraws the case from the ranking but keeps the models revealed", () => {
    const generating = Result.getOrThrow(claim(draft(), { configuration, claimId: "k", slots: slotsFor(candidates, responseIds, [0, 1, 2]) }, t0))
    const slots = generating.stage._tag === "Generating" ? generating.stage.slots : []
    const generated = Result.getOrThrow(complete(generating, { claimId: "k", responses: answered(slots, new Set()) }, t0))
    const verdicts = Object.fromEntries(slots.map((s) => [s.response_id, "correct" as const]))
    const confirmed = Result.getOrThrow(saveReview(generated, { revision: 3, confirm: true, review: { verdicts, reference: "", notes: "" } }, t0))
    expect(reviewState(confirmed)).toBe("confirmed")
    const withdrawn = Result.getOrThrow(saveReview(confirmed, { revision: 4, confirm: false, review: { verdicts: {}, reference: "", notes: "" } }, t0))
    expect(reviewState(withdrawn)).toBe("draft")
    expect(withdrawn.stage._tag === "Generated" && withdrawn.stage.revealed_at).toEqual(t0)
  })

  it("creation checks the text limits; a retry is recognised by its key", () => {
    const base = { id: CaseId.make(uuid(1)), leaderboardId: LeaderboardId.make(uuid(2)), workspaceId: WorkspaceId.make(uuid(3)), basePrompt: "", attachments: [], configuration, now: t0 }
    expect(failureOf(createCase({ ...base, input: "  " }))).toMatchObject({ path: ["input"] })
    expect(failureOf(createCase({ ...base, input: "x".repeat(32_001) }))).toMatchObject({ path: ["input"] })
    expect(failureOf(createCase({ ...base, input: "ok", context: "x".repeat(32_001) }))).toMatchObject({ path: ["context"] })
    expect(Result.isSuccess(createCase({ ...base, input: "x".repeat(32_000), prompt_override: "" }))).toBe(true)
    expect(creationKey({ id: base.id, input: "a", attachment_ids: ["2", "1", "1"] })).toBe(creationKey({ id: base.id, input: "a", context: "", prompt_override: null, attachment_ids: ["1", "2"] }))
    expect(creationKey({ id: base.id, input: "a", prompt_override: "" })).not.toBe(creationKey({ id: base.id, input: "a" }))
  })

  it("blind labels follow the shuffled order; the configuration ignores candidate order", () => {
    expect(slotsFor(candidates, responseIds, [2, 0, 1]).map((s) => [s.label, s.candidate_id, s.response_id])).toEqual([
      ["A", candidates[2]!.id, responseIds[0]],
      ["B", candidates[0]!.id, responseIds[1]],
      ["C", candidates[1]!.id, responseIds[2]]
    ])
    const a = { id: "a", platform: "Router" as const, model_name: "m", url: null, model_id: null, auth_type: "bearer" as const, auth_header_name: null }
    const b = { ...a, id: "b", model_name: "n" }
    expect(configurationOf("p", [a, b])).toBe(configurationOf("p", [b, a]))
    expect(configurationOf("p", [a, b])).not.toBe(configurationOf("q", [a, b]))
    expect(configurationOf("p", [a])).not.toBe(configurationOf("p", [a, b]))
  })

  it("generation sends the prompt, then documents, context and input in one user message", () => {
    expect(generationMessages({ prompt: "Be brief.", context: "Order 1", input: "Refund?" }, [{ name: "policy.md", text: "30 days" }])).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Document: policy.md\n30 days\n\nContext:\nOrder 1\n\nRefund?" }
    ])
    expect(generationMessages({ prompt: "", context: "", input: "Hi" }, [])).toEqual([{ role: "user", content: "Hi" }])
  })
})

describe("the case's transitions at their boundaries", () => {
  const t1 = DateTime.add(t0, { seconds: 1 })
  const t2 = DateTime.add(t0, { seconds: 2 })
  const t3 = DateTime.add(t0, { seconds: 3 })
  const claimed = (claimId: string) =>
    Result.getOrThrow(claim(draft(), { configuration, claimId, slots: slotsFor(candidates, responseIds, [2, 0, 1]) }, t1))
  const slotsOf = (c: HumanCase) => (c.stage._tag === "Generating" ? c.stage.slots : [])
  const generatedBy = (claimId: string) => {
    const generating = claimed(claimId)
    return Result.getOrThrow(complete(generating, { claimId, responses: answered(slotsOf(generating), new Set([1])) }, t2))
  }

  it("a generation under a stale claim is refused, before and after the case is generated", () => {
    const generating = claimed("current")
    const responses = answered(slotsOf(generating), new Set())
    expect(failureOf(complete(generating, { claimId: "stale", responses }, t2))).toMatchObject({ _tag: "ImmutableCase" })
    // the claim's own generation, once; a second completion of it finds the case generated
    const generated = Result.getOrThrow(complete(generating, { claimId: "current", responses }, t2))
    expect(failureOf(complete(generated, { claimId: "current", responses }, t3))).toMatchObject({ _tag: "ImmutableCase" })
    expect(failureOf(complete(draft(), { claimId: "current", responses }, t2))).toMatchObject({ _tag: "ImmutableCase" })
  })

  it("a generation answers the claimed slots one for one, and is stored in the slots' order", () => {
    const generating = claimed("k")
    const slots = slotsOf(generating)
    const responses = answered(slots, new Set())
    const refused = (rs: ReadonlyArray<CaseResponse>) => failureOf(complete(generating, { claimId: "k", responses: rs }, t2))
    expect(refused(responses.slice(1))).toMatchObject({
      _tag: "InvalidInput",
      message: "responses must answer the claimed slots one for one",
      path: ["responses"]
    })
    expect(refused([...responses, responses[0]!])).toMatchObject({ _tag: "InvalidInput" })
    expect(refused([responses[0]!, responses[0]!, responses[2]!])).toMatchObject({ _tag: "InvalidInput" })
    // the right candidate under another response id, and the right response id answered by another candidate
    expect(refused([responses[0]!, { ...responses[1]!, response_id: ResponseId.make(uuid(999)) }, responses[2]!]))
      .toMatchObject({ _tag: "InvalidInput" })
    expect(refused([responses[0]!, { ...responses[1]!, candidate_id: responses[2]!.candidate_id }, responses[2]!]))
      .toMatchObject({ _tag: "InvalidInput" })
    const generated = Result.getOrThrow(complete(generating, { claimId: "k", responses: [...responses].reverse() }, t2))
    expect(generated.stage).toMatchObject({ _tag: "Generated", generated_at: t2, responses, revealed_at: null, review: { _tag: "Unreviewed" } })
    expect([generated.revision, generated.updated_at]).toEqual([generating.revision + 1, t2])
  })

  it("a claim holds its id, time and slots", () => {
    const generating = claimed("k")
    expect(generating.stage).toEqual({ _tag: "Generating", claim_id: "k", claimed_at: t1, slots: slotsFor(candidates, responseIds, [2, 0, 1]) })
    expect([generating.revision, generating.updated_at]).toEqual([2, t1])
  })

  it("a configuration sets the prompt, null restoring the base prompt, within its limit and at the current revision only", () => {
    const c = draft()
    const save = (on: HumanCase, revision: number, prompt_override: string | null) =>
      saveConfig(on, { revision, prompt_override, basePrompt: "Base." }, t1)
    const overridden = Result.getOrThrow(save(c, 1, "Override."))
    expect([overridden.prompt, overridden.prompt_override, overridden.revision, overridden.updated_at]).toEqual(["Override.", "Override.", 2, t1])
    const restored = Result.getOrThrow(save(overridden, 2, null))
    expect([restored.prompt, restored.prompt_override]).toEqual(["Base.", null])
    expect(Result.isSuccess(save(c, 1, "x".repeat(32_000)))).toBe(true)
    expect(failureOf(save(c, 1, "x".repeat(32_001)))).toMatchObject({ _tag: "InvalidInput", path: ["prompt_override"] })
    for (const stale of [0, 2]) expect(failureOf(save(c, stale, null))).toMatchObject({ _tag: "StaleRevision", revision: stale, current_revision: 1 })
  })

  it("a review is saved at the current revision only, its texts within their limits", () => {
    const generated = generatedBy("k")
    const save = (revision: number, review: Partial<{ reference: string; notes: string }>) =>
      saveReview(generated, { revision, confirm: false, review: { verdicts: {}, reference: "", notes: "", ...review } }, t3)
    expect(generated.revision).toBe(3)
    for (const stale of [2, 4]) expect(failureOf(save(stale, {}))).toMatchObject({ _tag: "StaleRevision", revision: stale, current_revision: 3 })
    expect(Result.isSuccess(save(3, { reference: "x".repeat(32_000), notes: "x".repeat(8_000) }))).toBe(true)
    expect(failureOf(save(3, { notes: "x".repeat(8_001) }))).toMatchObject({ _tag: "InvalidInput", path: ["review.notes"] })
    expect(failureOf(saveReview(claimed("k"), { revision: 2, confirm: false, review: { verdicts: {}, reference: "", notes: "" } }, t3)))
      .toMatchObject({ _tag: "GenerationInProgress" })
  })

  it("a refused verdict says why and names the responses", () => {
    const generated = generatedBy("k")
    const review = (verdicts: Record<string, "correct">, confirm: boolean) =>
      failureOf(saveReview(generated, { revision: 3, confirm, review: { verdicts, reference: "", notes: "" } }, t3))
    expect(review({ [uuid(999)]: "correct" }, false)).toMatchObject({
      _tag: "InvalidVerdicts",
      message: "Verdicts may only name succeeded responses of this case",
      response_ids: [uuid(999)]
    })
    expect(review({ [responseIds[0]!]: "correct" }, true)).toMatchObject({
      _tag: "InvalidVerdicts",
      message: "To confirm, every succeeded response needs a verdict",
      response_ids: [responseIds[2]]
    })
  })

  it("a draft review keeps the models hidden; the first confirmation reveals them for good", () => {
    const generated = generatedBy("k")
    const verdicts = { [responseIds[0]!]: "correct" as const, [responseIds[2]!]: "incorrect" as const }
    const review = (c: HumanCase, confirm: boolean, now: DateTime.Utc) =>
      Result.getOrThrow(saveReview(c, { revision: c.revision, confirm, review: { verdicts, reference: "r", notes: "n" } }, now))
    const drafted = review(generated, false, t1)
    expect(drafted.stage).toMatchObject({ revealed_at: null, review: { _tag: "DraftReview", saved_at: t1, verdicts, reference: "r", notes: "n" } })
    const confirmed = review(drafted, true, t2)
    expect(confirmed.stage).toMatchObject({ revealed_at: t2, review: { _tag: "Confirmed", confirmed_at: t2, verdicts } })
    expect(review(confirmed, true, t3).stage).toMatchObject({ revealed_at: t2, review: { confirmed_at: t3 } })
    expect(review(confirmed, false, t3).stage).toMatchObject({ revealed_at: t2, review: { _tag: "DraftReview" } })
  })
})

describe("the reviewer's view of a case", () => {
  const generating = Result.getOrThrow(claim(draft(), { configuration, claimId: "k", slots: slotsFor(candidates, responseIds, [0, 1, 2]) }, t0))
  const slots = generating.stage._tag === "Generating" ? generating.stage.slots : []
  const generated = Result.getOrThrow(complete(generating, { claimId: "k", responses: answered(slots, new Set([1])) }, t0))
  const review = (c: HumanCase, confirm: boolean, revision: number) =>
    Result.getOrThrow(saveReview(c, {
      revision,
      confirm,
      review: { verdicts: confirm ? { [responseIds[0]!]: "correct", [responseIds[2]!]: "incorrect" } : {}, reference: "", notes: "" }
    }, t0))
  const view = (c: HumanCase) =>
    reviewerView({ case: c, responses: c.stage._tag === "Generated" ? c.stage.responses : [], response_total: 3, history: [], current: true })

  it("hides the models, costs and failure reasons until the review is first confirmed", () => {
    for (const blind of [generated, review(generated, false, 3)]) {
      const responses = view(blind).responses
      expect(responses.map((r) => [r.label, r.output, r.model, r.cost_usd])).toEqual([
        ["A", "answer 0", null, null],
        ["B", null, null, null],
        ["C", "answer 2", null, null]
      ])
      expect(responses[1]!.error).toBe(blindFailure)
    }
  })

  it("shows them from the first confirmation on, also after a later draft review", () => {
    const confirmed = review(generated, true, 3)
    for (const revealed of [confirmed, review(confirmed, false, 4)]) {
      const responses = view(revealed).responses
      expect(responses.map((r) => [r.model?.leaderboard_model_id, r.model?.name, r.cost_usd])).toEqual([
        [candidates[0]!.id, candidates[0]!.name, 0.001],
        [candidates[1]!.id, candidates[1]!.name, null],
        [candidates[2]!.id, candidates[2]!.name, 0.001]
      ])
      expect(responses[1]!.error).toBe("the endpoint answered 500")
    }
    expect([view(confirmed).review_state, view(review(confirmed, false, 4)).review_state]).toEqual(["confirmed", "draft"])
  })

  it("names each stage's status and review", () => {
    expect([draft(), generating, generated].map((c) => [view(c).status, view(c).review_state, view(c).review])).toEqual([
      ["draft", "none", null],
      ["generating", "none", null],
      ["generated", "none", null]
    ])
    expect(view(review(generated, false, 3)).review).toEqual({ state: "draft", verdicts: {}, reference: "", notes: "", saved_at: t0 })
  })
})
