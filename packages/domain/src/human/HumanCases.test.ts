import { DateTime, Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { IdGeneratorInOrder, ModelDirectoryEmpty, SecretCipherSealing, ServiceModelsEmpty, uuid, workspaceOwner } from "../testing/index.ts"
import { CandidateCalls, ChatProvider, ChatProviderFailed, ChatTargets, PriceCatalogue, type Trace, TraceWriter } from "../inference/index.ts"
import { IntegrationRepository } from "../integrations/index.ts"
import { type LeaderboardId, LeaderboardRepository, Leaderboards } from "../leaderboards/index.ts"
import { LeaderboardRepositoryMemory, ServingHistoryMemory } from "../leaderboards/memory.ts"
import { CaseGeneration } from "./CaseGeneration.ts"
import { CaseGenerator } from "./CaseGenerator.ts"
import type { CaseResponse, Verdicts } from "./CaseStage.ts"
import { HumanAccess } from "./HumanAccess.ts"
import { HumanCaseRepositoryMemory } from "./HumanCaseRepositoryMemory.ts"
import { HumanCases } from "./HumanCases.ts"
import { HumanDocumentRepository } from "./HumanDocumentRepository.ts"
import { CaseId } from "./HumanEval.ts"
import { blindFailure, reviewerView } from "./ReviewerView.ts"

// The use case over the memory repositories. Ports without a memory adapter are tiny fakes: ids in
// order, no documents or integrations, a chat provider with fixed answers ("flaky" always fails),
// and the durable generation run inline, step by step, as the workflow runs CaseGenerator.


const noIntegrations = Layer.succeed(IntegrationRepository, {
  save: () => Effect.void,
  find: () => Effect.succeedNone,
  list: () => Effect.succeed([]),
  remove: () => Effect.succeed(false)
})
const noDocuments = Layer.succeed(HumanDocumentRepository, {
  insert: () => Effect.die("not used"),
  find: () => Effect.succeedNone,
  shared: () => Effect.succeed([]),
  archive: () => Effect.succeedNone,
  texts: () => Effect.succeed([])
})
const tracesDropped = Layer.succeed(TraceWriter, { record: () => Effect.void, flush: Effect.void })
const fixedAnswers = Layer.succeed(ChatProvider, {
  complete: (target) =>
    target.candidateName === "flaky"
      ? Effect.fail(new ChatProviderFailed({
        candidate_id: target.candidateId,
        candidate_name: target.candidateName,
        reason: "vendor/flaky answered 500",
        upstream_status: 500,
        latency_ms: 7
      }))
      : Effect.succeed({
        body: "{}",
        output: `${target.candidateName}: 30 days`,
        usage: { prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 },
        costUsd: 0.002,
        latencyMs: 5
      }),
  stream: () => Effect.die("human generation never streams")
})
const inlineGeneration = Layer.effect(
  CaseGeneration,
  Effect.map(CaseGenerator, (generator) =>
    CaseGeneration.of({
      run: (job) =>
        Effect.flatMap(generator.slots(job), (slots) => Effect.forEach(slots, (id) => generator.answer(job, id))).pipe(
          Effect.andThen(generator.finish(job))
        )
    }))
)

/** The use cases over these answers, prices and trace writer. */
const layerWith = (answers: Layer.Layer<ChatProvider>, catalogue: Layer.Layer<PriceCatalogue>, traces: Layer.Layer<TraceWriter>) =>
  Layer.mergeAll(
    HumanCases.layer.pipe(
      Layer.provide(HumanAccess.layer),
      Layer.provide(inlineGeneration.pipe(
        Layer.provide(CaseGenerator.layer),
        Layer.provide(CandidateCalls.layer),
        Layer.provide(ChatTargets.layer)
      ))
    ),
    Leaderboards.layer
  ).pipe(
    Layer.provideMerge(HumanCaseRepositoryMemory.layer),
    Layer.provideMerge(Layer.merge(LeaderboardRepositoryMemory.layer, ServingHistoryMemory.layer)),
    Layer.provideMerge(Layer.mergeAll(IdGeneratorInOrder.layer, SecretCipherSealing.layer, ModelDirectoryEmpty.layer, ServiceModelsEmpty.layer, noIntegrations, noDocuments, traces, answers, catalogue)),
    Layer.provideMerge(TestClock.layer())
  )
const layer = layerWith(fixedAnswers, Layer.succeed(PriceCatalogue, PriceCatalogue.none), tracesDropped)

const run = <A, E>(effect: Effect.Effect<A, E, Layer.Success<typeof layer>>) => Effect.runPromise(Effect.provide(effect, layer))

const owner = workspaceOwner(1)
const stranger = workspaceOwner(2)
const caseId = CaseId.make(uuid(7))

/** A human leaderboard of `owner` with these Router candidates. */
const aHumanLeaderboard = (names = ["mini", "large", "flaky"]) =>
  Effect.gen(function*() {
    const leaderboards = yield* Leaderboards
    const { id } = yield* leaderboards.create(owner, { name: "Refunds", dataset_type: "PUSH", eval_type: "human", system_prompt: "Cite the policy." })
    for (const name of names) yield* leaderboards.addCandidate(owner, id, { name, model_name: `vendor/${name}` })
    return id
  })
const humanLeaderboard = aHumanLeaderboard()

const rankingWinner = (leaderboard: LeaderboardId) =>
  Effect.flatMap(LeaderboardRepository, (r) => Effect.map(r.findServing(leaderboard), (s) => Option.getOrThrow(s).ranking_winner))

/** `leaderboard`'s case `caseId`, created and generated. */
const generatedCase = (leaderboard: LeaderboardId) =>
  Effect.gen(function*() {
    const cases = yield* HumanCases
    yield* cases.create(owner, leaderboard, { id: caseId, input: "How long is the refund window?" })
    return yield* cases.generate(owner, leaderboard, caseId)
  })

/** Verdicts on the succeeded responses: `correct` for the candidate named `right`, `incorrect` for the others. */
const judging = (responses: ReadonlyArray<CaseResponse>, right: string): Verdicts =>
  Object.fromEntries(responses.filter((r) => r.status === "succeeded")
    .map((r) => [r.response_id, r.candidate_name === right ? "correct" : "incorrect"] as const))

const review = (verdicts: Verdicts) => ({ verdicts, reference: "30 days from delivery", notes: "" })

describe("HumanCases", () => {
  it("a draft is configured, generated by every candidate, reviewed and confirmed, at the clock's times", () =>
    run(Effect.gen(function*() {
      const cases = yield* HumanCases
      yield* TestClock.setTime(Date.parse("2026-11-22T10:00:00.000Z"))
      const leaderboard = yield* humanLeaderboard
      const created = yield* cases.create(owner, leaderboard, { id: caseId, input: "How long is the refund window?" })
      expect(created.created).toBe(true)
      expect(created.detail).toMatchObject({ responses: [], response_total: 0, history: [], current: true })
      expect(created.detail.case).toMatchObject({ revision: 1, prompt: "Cite the policy.", stage: { _tag: "Draft" } })

      yield* TestClock.adjust("1 minute")
      const configured = yield* cases.saveConfig(owner, leaderboard, caseId, { revision: 1, prompt_override: "Be brief." })
      expect(configured.case).toMatchObject({ revision: 2, prompt: "Be brief.", prompt_override: "Be brief." })
      expect(DateTime.formatIso(configured.case.updated_at)).toBe("2026-11-22T10:01:00.000Z")

      yield* TestClock.adjust("1 minute")
      const generated = yield* cases.generate(owner, leaderboard, caseId)
      expect(generated.case).toMatchObject({ revision: 4, stage: { _tag: "Generated", revealed_at: null, review: { _tag: "Unreviewed" } } })
      expect(generated.response_total).toBe(3)
      expect(generated.responses.map((r) => [r.candidate_name, r.status, r.output]).toSorted()).toEqual([
        ["flaky", "failed", null],
        ["large", "succeeded", "large: 30 days"],
        ["mini", "succeeded", "mini: 30 days"]
      ])
      expect(generated.responses.map((r) => r.label)).toEqual(["A", "B", "C"])

      yield* TestClock.adjust("1 minute")
      const drafted = yield* cases.saveReview(owner, leaderboard, caseId, {
        revision: 4,
        confirm: false,
        review: review(judging(generated.responses, "large"))
      })
      expect(drafted.case).toMatchObject({ revision: 5, stage: { review: { _tag: "DraftReview" }, revealed_at: null } })

      yield* TestClock.adjust("1 minute")
      const confirmed = yield* cases.saveReview(owner, leaderboard, caseId, {
        revision: 5,
        confirm: true,
        review: review(judging(generated.responses, "mini"))
      })
      expect(confirmed.case).toMatchObject({ revision: 6, stage: { review: { _tag: "Confirmed" } } })
      expect(confirmed.history.map((h) => [h.revision, h.confirmed, h.saved_by])).toEqual([[6, true, uuid(101)], [5, false, uuid(101)]])
      expect(DateTime.formatIso(confirmed.history[0]!.saved_at)).toBe("2026-11-22T10:04:00.000Z")
      expect(yield* cases.get(owner, leaderboard, caseId)).toEqual(confirmed)
      // a failed answer leaves the case out of the common cases, which alone name a winner
      expect(yield* rankingWinner(leaderboard)).toBeNull()
    })))

  it("confirming names the first winner and records it once; withdrawing the confirmation keeps it (only first or switch change it)", () =>
    run(Effect.gen(function*() {
      const cases = yield* HumanCases
      const leaderboard = yield* aHumanLeaderboard(["mini", "large"])
      const generated = yield* generatedCase(leaderboard)
      const verdicts = judging(generated.responses, "mini")
      yield* TestClock.setTime(Date.parse("2026-11-22T10:00:00.000Z"))
      yield* cases.saveReview(owner, leaderboard, caseId, { revision: 3, confirm: true, review: review(verdicts) })
      const mini = generated.responses.find((r) => r.candidate_name === "mini")!
      expect(yield* rankingWinner(leaderboard)).toBe(mini.candidate_id)
      const history = (yield* (yield* Leaderboards).servingHistory(owner, leaderboard, { limit: 10 })).entries
      expect(history.map((e) => [e.kind, e.from_candidate_id, e.to_candidate_id, e.actor, DateTime.formatIso(e.at)])).toEqual([
        ["human", null, mini.candidate_id, { type: "user", id: uuid(101) }, "2026-11-22T10:00:00.000Z"]
      ])
      yield* cases.saveReview(owner, leaderboard, caseId, { revision: 4, confirm: false, review: review(verdicts) })
      expect(yield* rankingWinner(leaderboard)).toBe(mini.candidate_id)
      expect((yield* (yield* Leaderboards).servingHistory(owner, leaderboard, { limit: 10 })).entries).toHaveLength(1)
    })))

  it("a change from a stale revision is refused, naming the current one", () =>
    run(Effect.gen(function*() {
      const cases = yield* HumanCases
      const leaderboard = yield* humanLeaderboard
      yield* cases.create(owner, leaderboard, { id: caseId, input: "How long is the refund window?" })
      yield* cases.saveConfig(owner, leaderboard, caseId, { revision: 1, prompt_override: "Be brief." })
      expect(yield* Effect.flip(cases.saveConfig(owner, leaderboard, caseId, { revision: 1, prompt_override: "lost" })))
        .toMatchObject({ _tag: "StaleRevision", revision: 1, current_revision: 2 })
      const generated = yield* cases.generate(owner, leaderboard, caseId)
      const verdicts = judging(generated.responses, "mini")
      yield* cases.saveReview(owner, leaderboard, caseId, { revision: 4, confirm: false, review: review(verdicts) })
      expect(yield* Effect.flip(cases.saveReview(owner, leaderboard, caseId, { revision: 4, confirm: true, review: review(verdicts) })))
        .toMatchObject({ _tag: "StaleRevision", revision: 4, current_revision: 5 })
      expect((yield* cases.get(owner, leaderboard, caseId)).case.revision).toBe(5)
      // a generated case takes no new configuration at any revision
      expect(yield* Effect.flip(cases.saveConfig(owner, leaderboard, caseId, { revision: 5, prompt_override: "x" })))
        .toMatchObject({ _tag: "ImmutableCase" })
    })))

  it("the reviewer sees neither models, costs nor failure reasons until the review is confirmed", () =>
    run(Effect.gen(function*() {
      const cases = yield* HumanCases
      const leaderboard = yield* humanLeaderboard
      const generated = yield* generatedCase(leaderboard)
      const verdicts = judging(generated.responses, "large")
      const drafted = yield* cases.saveReview(owner, leaderboard, caseId, { revision: 3, confirm: false, review: review(verdicts) })
      for (const blind of [generated, drafted].map(reviewerView)) {
        expect(blind.responses.map((r) => [r.model, r.cost_usd])).toEqual([[null, null], [null, null], [null, null]])
        expect(blind.responses.filter((r) => r.status === "failed").map((r) => r.error)).toEqual([blindFailure])
      }
      const confirmed = reviewerView(yield* cases.saveReview(owner, leaderboard, caseId, { revision: 4, confirm: true, review: review(verdicts) }))
      expect(confirmed.responses.map((r) => [r.model?.name, r.cost_usd, r.error]).toSorted()).toEqual([
        ["flaky", null, "vendor/flaky answered 500"],
        ["large", 0.002, null],
        ["mini", 0.002, null]
      ])
      // revealed for good: withdrawing the confirmation does not blind the case again
      const withdrawn = yield* cases.saveReview(owner, leaderboard, caseId, { revision: 5, confirm: false, review: review(verdicts) })
      expect(reviewerView(withdrawn).responses.every((r) => r.model !== null)).toBe(true)
    })))

  it("a retried creation answers with the stored case; the id with another payload is refused", () =>
    run(Effect.gen(function*() {
      const cases = yield* HumanCases
      const leaderboard = yield* humanLeaderboard
      const first = yield* cases.create(owner, leaderboard, { id: caseId, input: "How long is the refund window?" })
      yield* cases.saveConfig(owner, leaderboard, caseId, { revision: 1, prompt_override: "Be brief." })
      const retry = yield* cases.create(owner, leaderboard, { id: caseId, input: "How long is the refund window?" })
      expect(retry.created).toBe(false)
      expect(retry.detail.case).toMatchObject({ id: first.detail.case.id, revision: 2 })
      expect(yield* Effect.flip(cases.create(owner, leaderboard, { id: caseId, input: "Another question" })))
        .toMatchObject({ _tag: "IdReused", id: caseId })
    })))

  it("a draft made before the candidates changed cannot be generated", () =>
    run(Effect.gen(function*() {
      const cases = yield* HumanCases
      const leaderboard = yield* humanLeaderboard
      yield* cases.create(owner, leaderboard, { id: caseId, input: "How long is the refund window?" })
      yield* (yield* Leaderboards).addCandidate(owner, leaderboard, { name: "newcomer", model_name: "vendor/newcomer" })
      expect(yield* Effect.flip(cases.generate(owner, leaderboard, caseId))).toMatchObject({ _tag: "ConfigurationChanged" })
      expect((yield* cases.get(owner, leaderboard, caseId)).current).toBe(false)
    })))

  it("another workspace's member finds no such leaderboard", () =>
    run(Effect.gen(function*() {
      const cases = yield* HumanCases
      const leaderboard = yield* humanLeaderboard
      yield* generatedCase(leaderboard)
      expect(yield* Effect.flip(cases.get(stranger, leaderboard, caseId))).toMatchObject({ _tag: "NotFound", resource: "leaderboard" })
      expect(yield* Effect.flip(cases.create(stranger, leaderboard, { id: CaseId.make(uuid(8)), input: "x" })))
        .toMatchObject({ _tag: "NotFound" })
    })))

  it("answers are priced as every other call of a candidate: its own prices, else the router's catalogue", async () => {
    // the provider prices what the upstream reports no cost for at the target's prices, as ChatProviderOpenAi does
    const pricedAnswers = Layer.succeed(ChatProvider, {
      complete: (target) =>
        Effect.succeed({
          body: "{}",
          output: "30 days",
          usage: { prompt_tokens: 1_000, completion_tokens: 500, total_tokens: 1_500 },
          costUsd: target.inputPricePerMTokens === null || target.outputPricePerMTokens === null
            ? null
            : (1_000 * target.inputPricePerMTokens + 500 * target.outputPricePerMTokens) / 1e6,
          latencyMs: 5
        }),
      stream: () => Effect.die("human generation never streams")
    })
    const catalogue = Layer.succeed(PriceCatalogue, PriceCatalogue.of({
      routerPrices: (model) => Effect.succeed(model === "vendor/mini" ? { input: 2, output: 8 } : { input: null, output: null })
    }))
    const traces: Array<Trace> = []
    const tracesKept = Layer.succeed(TraceWriter, { record: (trace) => Effect.sync(() => void traces.push(trace)), flush: Effect.void })
    const generated = await Effect.runPromise(Effect.provide(
      Effect.gen(function*() {
        const leaderboards = yield* Leaderboards
        const { id } = yield* leaderboards.create(owner, { name: "Refunds", dataset_type: "PUSH", eval_type: "human" })
        yield* leaderboards.addCandidate(owner, id, { name: "mini", model_name: "vendor/mini" })
        yield* leaderboards.addCandidate(owner, id, { name: "unlisted", model_name: "vendor/unlisted" })
        yield* leaderboards.addCandidate(owner, id, {
          name: "own",
          model_name: "vendor/mini",
          input_price_per_m_tokens: 1,
          output_price_per_m_tokens: 1
        })
        return yield* generatedCase(id)
      }),
      layerWith(pricedAnswers, catalogue, tracesKept)
    ))
    const costs = [["mini", 0.006], ["own", 0.0015], ["unlisted", null]]
    expect(generated.responses.map((r) => [r.candidate_name, r.cost_usd]).toSorted()).toEqual(costs)
    const names = new Map<string, string>(generated.responses.map((r) => [r.candidate_id, r.candidate_name]))
    expect(traces.map((t) => [names.get(t.leaderboard_model_id!), t.cost_usd]).toSorted()).toEqual(costs)
    expect(traces.map((t) => t.source)).toEqual(["manual", "manual", "manual"])
  })
})
