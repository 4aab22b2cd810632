import { assert, describe, layer } from "@effect/vitest"
import { WorkspaceRepository } from "@podium/domain/access"
import {
  CaseId,
  type CaseResponse,
  claim,
  complete,
  createCase,
  HumanCase,
  HumanCaseRepository,
  type RankedCase,
  ResponseId,
  saveConfig,
  saveReview,
  slotsFor,
  Stage,
  type Tallies,
  tally,
  type Verdict
} from "@podium/domain/human"
import { CandidateId, LeaderboardId, LeaderboardRepository, ServingEntryId, ServingHistory } from "@podium/domain/leaderboards"
import type { WorkspaceId } from "@podium/domain/shared"
import { DateTime, Effect, type Layer, Option, Result } from "effect"
import { aLeaderboard } from "./LeaderboardRepository.contract.ts"
import { aUser } from "./WorkspaceRepository.contract.ts"

const t0 = DateTime.makeUnsafe("2026-11-22T10:00:00.000Z")
const at = (minutes: number) => DateTime.add(t0, { minutes })

const candidates = ["alpha", "beta", "gamma"].map((name) => ({
  id: CandidateId.make(crypto.randomUUID()),
  name,
  platform: "Router" as const,
  model_name: `vendor/${name}`
}))
const cohort = { configuration: "config", candidates }
/** A fresh serving-history entry's id, time and actor, for a review that changes the winner. */
const servingEntry = () => ({ id: ServingEntryId.make(crypto.randomUUID()), at: t0, actor: { type: "system" as const, id: "test" } })
const candidateIds = candidates.map((c) => c.id as string)

interface Owner {
  readonly workspace: WorkspaceId
  readonly leaderboard: LeaderboardId
}

/** A leaderboard for cases to belong to, in a workspace of its own unless one is given. */
const anOwner = (workspace?: WorkspaceId) =>
  Effect.gen(function*() {
    const owner = workspace ?? (yield* aUser()).workspaceId
    const leaderboard = aLeaderboard(owner)
    yield* (yield* LeaderboardRepository).insert(leaderboard)
    return { workspace: owner, leaderboard: leaderboard.id } satisfies Owner
  })

const aDraft = (owner: Owner, fields: { readonly id?: CaseId; readonly input?: string; readonly now?: DateTime.Utc; readonly configuration?: string } = {}) =>
  Result.getOrThrow(createCase({
    id: fields.id ?? CaseId.make(crypto.randomUUID()),
    input: fields.input ?? "How long is the refund window?",
    leaderboardId: owner.leaderboard,
    workspaceId: owner.workspace,
    basePrompt: "Answer from the policy.",
    attachments: [],
    configuration: fields.configuration ?? cohort.configuration,
    now: fields.now ?? t0
  }))

/** `c` claimed as `claimId`; the slots' labels are shuffled, so slot order is not candidate order. */
const claimed = (c: HumanCase, claimId = "first", now = c.updated_at) =>
  Result.getOrThrow(claim(c, {
    configuration: c.configuration,
    claimId,
    slots: slotsFor(candidates, candidates.map(() => ResponseId.make(crypto.randomUUID())), [2, 0, 1])
  }, now))

/** An answer for each slot of a generating case; the slot at `failed` failed. */
const answersOf = (c: HumanCase, failed = -1): Array<CaseResponse> =>
  c.stage._tag !== "Generating" ? [] : c.stage.slots.map((slot, i) => ({
    ...slot,
    status: i === failed ? "failed" : "succeeded",
    output: i === failed ? null : `answer ${slot.label}`,
    error: i === failed ? "the router answered 500" : null,
    latency_ms: 20 + i,
    usage: i === failed ? null : { prompt_tokens: 10, completion_tokens: i, total_tokens: 10 + i },
    cost_usd: i === failed ? null : i === 2 ? null : 0.001 * (i + 1),
    trace_id: crypto.randomUUID(),
    created_at: t0
  }))

/** A stored case, claimed, answered and completed through the repository. */
const aGeneratedCase = (owner: Owner, fields: Parameters<typeof aDraft>[1] & { readonly failed?: number } = {}) =>
  Effect.gen(function*() {
    const repository = yield* HumanCaseRepository
    const draft = aDraft(owner, fields)
    yield* repository.insert(draft)
    const generating = claimed(draft)
    assert.isTrue(yield* repository.update(generating))
    const answers = answersOf(generating, fields.failed)
    for (const answer of answers) yield* repository.saveResponse(draft, answer)
    const generated = Result.getOrThrow(complete(generating, { claimId: "first", responses: answers }, generating.updated_at))
    assert.isTrue(yield* repository.update(generated))
    return generated
  })

/** `c`'s review with `verdictOf` each succeeded response (by slot), and its history entry. */
const reviewed = (c: HumanCase, verdictOf: (slot: number) => Verdict, confirm = true, notes = "") => {
  const responses = c.stage._tag === "Generated" ? c.stage.responses : []
  const verdicts = Object.fromEntries(
    responses.flatMap((r, i) => r.status === "succeeded" ? [[r.response_id, verdictOf(i)] as const] : [])
  )
  const review = { verdicts, reference: "30 days", notes }
  const now = DateTime.add(c.updated_at, { minutes: 1 })
  const next = Result.getOrThrow(saveReview(c, { revision: c.revision, confirm, review }, now))
  return { next, entry: { revision: next.revision, confirmed: confirm, review, saved_by: null, saved_at: now } }
}

/** Slot `i` of the cases above answers for this candidate (their slots are in the order 2, 0, 1). */
const slotOf = (candidate: number) => [1, 2, 0][candidate]!

const found = (c: HumanCase) =>
  Effect.flatMap(HumanCaseRepository, (r) => Effect.map(r.find(c.leaderboard_id, c.id), Option.getOrUndefined))

const rankingWinner = (leaderboard: LeaderboardId) =>
  Effect.flatMap(LeaderboardRepository, (r) =>
    Effect.map(r.findServing(leaderboard), (s) => Option.getOrThrow(s).ranking_winner))

/** The leaderboard's serving-history entries, newest first. */
const servingEntries = (leaderboard: LeaderboardId) =>
  Effect.flatMap(ServingHistory, (h) => Effect.map(h.list(leaderboard, { limit: 100 }), (page) => page.entries))

/** Tallies with zero rows left out and costs rounded: an adapter may keep either, and sums in any order. */
const normalized = (t: Tallies) => {
  const rows = (m: Tallies["rows"]) =>
    Object.fromEntries([...m].filter(([, x]) => Object.values(x).some((v) => v !== 0))
      .map(([id, x]) => [id, { ...x, cost_sum: Math.round(x.cost_sum * 1e9) / 1e9 }]))
  return { rows: rows(t.rows), common: rows(t.common), confirmed: t.confirmed, comparable: t.comparable }
}

/** What HumanRanking.tally makes of these cases as they are stored. */
const rankedAs = (cases: ReadonlyArray<HumanCase>): Array<RankedCase> =>
  cases.flatMap((c) => {
    if (c.stage._tag !== "Generated") return []
    const review = c.stage.review
    const verdicts = review._tag === "Unreviewed" ? {} : review.verdicts
    return [{
      confirmed: review._tag === "Confirmed",
      responses: c.stage.responses.map((r) => ({ ...r, verdict: verdicts[r.response_id] ?? null }))
    }]
  })

/**
 * The behaviour the use cases rely on, declared once and run against every adapter of
 * `HumanCaseRepository` (STYLE.md 19). A saved review decides the leaderboard's ranking winner, and
 * cases belong to leaderboards of workspaces, so the layer also brings the `LeaderboardRepository`
 * and `ServingHistory` the adapter records it through and a `WorkspaceRepository`; `makeLayer`
 * builds them fresh.
 */
export const humanCaseRepositoryContract = (
  name: string,
  makeLayer: () => Layer.Layer<HumanCaseRepository | LeaderboardRepository | ServingHistory | WorkspaceRepository, unknown>
) =>
  describe(`HumanCaseRepository contract: ${name}`, () => {
    layer(makeLayer(), { timeout: 60_000 })((it) => {
      it.effect("stores a case once per client id and workspace; another workspace's use of the id is its own", () =>
        Effect.gen(function*() {
          const repository = yield* HumanCaseRepository
          const owner = yield* anOwner()
          const c = aDraft(owner)
          assert.deepStrictEqual(yield* repository.insert(c), { _tag: "Inserted" })
          assert.deepStrictEqual(yield* found(c), c)
          // the same id in the workspace: taken, answering with the stored case (a retry tells itself apart by its key)
          const again = yield* repository.insert(aDraft(owner, { id: c.id, input: "another question" }))
          assert.deepStrictEqual(again, { _tag: "Taken", existing: Option.some(c) })
          // taken too from another leaderboard of the workspace, where no case answers to it
          const sibling = yield* anOwner(owner.workspace)
          assert.deepStrictEqual(yield* repository.insert(aDraft(sibling, { id: c.id })), { _tag: "Taken", existing: Option.none() })
          assert.isUndefined(yield* found(new HumanCase({ ...c, leaderboard_id: sibling.leaderboard })))
          // another workspace's case with the same id is a case of its own
          const stranger = aDraft(yield* anOwner(), { id: c.id, input: "their question" })
          assert.deepStrictEqual(yield* repository.insert(stranger), { _tag: "Inserted" })
          assert.deepStrictEqual(yield* found(stranger), stranger)
          assert.deepStrictEqual(yield* found(c), c)
          assert.isTrue(Option.isNone(yield* repository.find(LeaderboardId.make(crypto.randomUUID()), c.id)))
        }))

      it.effect("updates only from the revision it was computed from: the loser of a race gets false", () =>
        Effect.gen(function*() {
          const repository = yield* HumanCaseRepository
          const c = aDraft(yield* anOwner())
          yield* repository.insert(c)
          const configure = (prompt: string) =>
            Result.getOrThrow(saveConfig(c, { revision: c.revision, prompt_override: prompt, basePrompt: "" }, at(1)))
          const first = configure("Be brief.")
          assert.isTrue(yield* repository.update(first))
          assert.deepStrictEqual(yield* found(c), first)
          // computed from the same (now old) revision: refused, and nothing of it is written
          assert.isFalse(yield* repository.update(configure("lost")))
          assert.isFalse(yield* repository.update(new HumanCase({ ...first, prompt: "skipped", revision: first.revision + 2 })))
          assert.isFalse(yield* repository.update(aDraft(yield* anOwner(), { id: CaseId.make(crypto.randomUUID()) })))
          assert.deepStrictEqual(yield* found(c), first)
        }))

      it.effect("of many simultaneous claims of one draft exactly one lands", () =>
        Effect.gen(function*() {
          const repository = yield* HumanCaseRepository
          const c = aDraft(yield* anOwner())
          yield* repository.insert(c)
          const attempts = Array.from({ length: 12 }, (_, i) => claimed(c, `claim-${i}`))
          const won = yield* Effect.forEach(attempts, repository.update, { concurrency: "unbounded" })
          assert.strictEqual(won.filter(Boolean).length, 1)
          assert.deepStrictEqual(yield* found(c), attempts[won.indexOf(true)])
        }))

      it.effect("a stale claim is taken over from the stored case; the old claim can no longer complete it", () =>
        Effect.gen(function*() {
          const repository = yield* HumanCaseRepository
          const c = aDraft(yield* anOwner())
          yield* repository.insert(c)
          const first = claimed(c, "first")
          assert.isTrue(yield* repository.update(first))
          const slots = first.stage._tag === "Generating" ? first.stage.slots : []
          const takeover = new HumanCase({
            ...first,
            revision: first.revision + 1,
            stage: Stage.cases.Generating.make({ claim_id: "second", claimed_at: at(30), slots: [...slots] }),
            updated_at: at(30)
          })
          assert.isTrue(yield* repository.update(takeover))
          assert.deepStrictEqual(yield* found(c), takeover)
          const answers = answersOf(first)
          for (const answer of answers) yield* repository.saveResponse(c, answer)
          const late = Result.getOrThrow(complete(first, { claimId: "first", responses: answers }, at(31)))
          assert.isFalse(yield* repository.update(late))
          const done = Result.getOrThrow(complete(takeover, { claimId: "second", responses: answers }, at(31)))
          assert.isTrue(yield* repository.update(done))
          assert.deepStrictEqual(yield* found(c), done)
        }))

      it.effect("keeps the first save of each slot's response, in slot order; a response of no stored case is refused", () =>
        Effect.gen(function*() {
          const repository = yield* HumanCaseRepository
          const c = aDraft(yield* anOwner())
          yield* repository.insert(c)
          assert.deepStrictEqual(yield* repository.responses(c), [])
          const generating = claimed(c)
          yield* repository.update(generating)
          const answers = answersOf(generating, 1)
          yield* repository.saveResponse(c, answers[2]!)
          // activities repeat: the same response again, or another one for the same candidate, keeps the first
          yield* repository.saveResponse(c, { ...answers[2]!, output: "a repeated activity" })
          yield* repository.saveResponse(c, { ...answers[2]!, response_id: ResponseId.make(crypto.randomUUID()) })
          assert.deepStrictEqual(yield* repository.responses(c), [answers[2]!])
          // text Postgres cannot hold is stored with U+FFFD instead
          yield* repository.saveResponse(c, { ...answers[0]!, output: "nul \u0000 here" })
          yield* repository.saveResponse(c, answers[1]!)
          assert.deepStrictEqual(yield* repository.responses(c), [{ ...answers[0]!, output: "nul \uFFFD here" }, ...answers.slice(1)])

          const stray = aDraft(yield* anOwner())
          const refused = yield* Effect.flip(repository.saveResponse(stray, answersOf(claimed(stray))[0]!))
          assert.strictEqual(refused._tag, "ResponseRefused")
          assert.deepStrictEqual(yield* repository.responses(stray), [])
        }))

      it.effect("a generated case is found with its stored answers; reviews keep their history, newest first", () =>
        Effect.gen(function*() {
          const repository = yield* HumanCaseRepository
          const generated = yield* aGeneratedCase(yield* anOwner(), { failed: 0 })
          assert.deepStrictEqual(yield* found(generated), generated)
          assert.deepStrictEqual(yield* repository.history(generated, 10), [])

          const draft = reviewed(generated, () => "incorrect", false, "first look")
          assert.isTrue(yield* repository.saveReview(draft.next, draft.entry, cohort, servingEntry()))
          const confirmed = reviewed(draft.next, (i) => i === 1 ? "correct" : "abstain")
          assert.isTrue(yield* repository.saveReview(confirmed.next, confirmed.entry, cohort, servingEntry()))
          assert.deepStrictEqual(yield* found(generated), confirmed.next)
          assert.deepStrictEqual(yield* repository.history(generated, 10), [confirmed.entry, draft.entry])
          assert.deepStrictEqual(yield* repository.history(generated, 1), [confirmed.entry])
        }))

      it.effect("a saved review sets the winner the serving policy names and records only that change; a lost review records nothing", () =>
        Effect.gen(function*() {
          const repository = yield* HumanCaseRepository
          const owner = yield* anOwner()
          const generated = yield* aGeneratedCase(owner)
          assert.isNull(yield* rankingWinner(owner.leaderboard))
          // alpha alone right on one case: the best score, but all three are statistically tied (p = 1),
          // so the first to serve is the cheapest of them, gamma (0.001 per call; alpha 0.002, beta unknown)
          const alphaRight = reviewed(generated, (i) => i === slotOf(0) ? "correct" : "incorrect")
          assert.isTrue(yield* repository.saveReview(alphaRight.next, alphaRight.entry, cohort, servingEntry()))
          assert.strictEqual(yield* rankingWinner(owner.leaderboard), candidates[2]!.id)
          const first = yield* servingEntries(owner.leaderboard)
          assert.deepStrictEqual(first.map((e) => [e.kind, e.from_candidate_id, e.to_candidate_id]), [["human", null, candidates[2]!.id]])
          assert.strictEqual(first[0]!.evidence?.["chosen_among_ties"], true)

          const betaRight = reviewed(generated, (i) => i === slotOf(1) ? "correct" : "incorrect")
          assert.isFalse(yield* repository.saveReview(betaRight.next, betaRight.entry, cohort, servingEntry()))
          assert.strictEqual(yield* rankingWinner(owner.leaderboard), candidates[2]!.id)
          assert.deepStrictEqual(yield* repository.history(generated, 10), [alphaRight.entry])
          assert.deepStrictEqual(yield* found(generated), alphaRight.next)

          // withdrawn to a draft review: no candidate has a score, which changes nothing (a keep is not recorded)
          const withdrawn = reviewed(alphaRight.next, (i) => i === slotOf(0) ? "correct" : "incorrect", false)
          assert.isTrue(yield* repository.saveReview(withdrawn.next, withdrawn.entry, cohort, servingEntry()))
          assert.strictEqual(yield* rankingWinner(owner.leaderboard), candidates[2]!.id)
          assert.deepStrictEqual(yield* servingEntries(owner.leaderboard), first)
        }))

      it.effect("simultaneous first reviews name one winner, once: each decides on what the last one left", () =>
        Effect.gen(function*() {
          const repository = yield* HumanCaseRepository
          const owner = yield* anOwner()
          const cases = yield* Effect.forEach([0, 1, 2, 3], () => aGeneratedCase(owner))
          // at once, with nothing serving, each case judges one candidate right: alpha twice, beta and gamma once
          const saved = yield* Effect.forEach(cases, (c, n) => {
            const right = slotOf([0, 1, 0, 2][n]!)
            const { entry, next } = reviewed(c, (i) => i === right ? "correct" : "incorrect")
            return repository.saveReview(next, entry, cohort, servingEntry())
          }, { concurrency: "unbounded" })
          assert.deepStrictEqual(saved, [true, true, true, true])
          // the first save decides `first`; every later one sees it serving and keeps it (4 cases < min_rows 30)
          const entries = yield* servingEntries(owner.leaderboard)
          assert.deepStrictEqual(entries.map((e) => [e.kind, e.from_candidate_id]), [["human", null]])
          assert.strictEqual(yield* rankingWinner(owner.leaderboard), entries[0]!.to_candidate_id)
        }))

      it.effect("the tallies of a configuration are HumanRanking.tally over its generated cases as they end up", () =>
        Effect.gen(function*() {
          const repository = yield* HumanCaseRepository
          const owner = yield* anOwner()
          const save = Effect.fnUntraced(function*(r: ReturnType<typeof reviewed>) {
            assert.isTrue(yield* repository.saveReview(r.next, r.entry, cohort, servingEntry()))
            return r.next
          })
          const allRight = yield* save(reviewed(yield* aGeneratedCase(owner), () => "correct"))
          const withFailure = yield* save(reviewed(yield* aGeneratedCase(owner, { failed: 1 }), (i) => i === 0 ? "correct" : "incorrect"))
          const withdrawn = yield* save(reviewed(yield* save(reviewed(yield* aGeneratedCase(owner), () => "correct")), () => "abstain", false))
          const unreviewed = yield* aGeneratedCase(owner)
          const reconfirmed = yield* save(reviewed(yield* save(reviewed(yield* aGeneratedCase(owner), () => "correct")), (i) => i === 2 ? "correct" : "incorrect"))
          const current = [allRight, withFailure, withdrawn, unreviewed, reconfirmed]
          // neither a draft nor a case of another configuration counts
          yield* repository.insert(aDraft(owner))
          const older = yield* aGeneratedCase(owner, { configuration: "older" })
          yield* save(reviewed(older, () => "correct"))

          const expected = tally(candidates, rankedAs(current))
          assert.deepStrictEqual(normalized(yield* repository.tallies(owner.leaderboard, "config", candidateIds)), normalized(expected))
          // only the candidates asked for
          const alpha = (m: Tallies["rows"]) => new Map([...m].filter(([id]) => id === candidateIds[0]))
          assert.deepStrictEqual(
            normalized(yield* repository.tallies(owner.leaderboard, "config", candidateIds.slice(0, 1))),
            normalized({ ...expected, rows: alpha(expected.rows), common: alpha(expected.common) })
          )
          assert.deepStrictEqual(
            normalized(yield* repository.tallies(LeaderboardId.make(crypto.randomUUID()), "config", candidateIds)),
            { rows: {}, common: {}, confirmed: 0, comparable: 0 }
          )
        }))

      it.effect("counts, pages and lists the confirmed cases of a leaderboard, oldest first", () =>
        Effect.gen(function*() {
          const repository = yield* HumanCaseRepository
          const owner = yield* anOwner()
          const long = "😀".repeat(300)
          const first = aDraft(owner, { now: at(1), configuration: "older" })
          const second = yield* aGeneratedCase(owner, { now: at(2) })
          const third = aDraft(owner, { now: at(3), input: long })
          const fourth = yield* aGeneratedCase(owner, { now: at(4) })
          for (const draft of [first, third]) yield* repository.insert(draft)
          const confirmed = reviewed(second, () => "correct")
          yield* repository.saveReview(confirmed.next, confirmed.entry, cohort, servingEntry())
          yield* repository.insert(aDraft(yield* anOwner(owner.workspace))) // another leaderboard's

          assert.deepStrictEqual(yield* repository.counts(owner.leaderboard, "config"), {
            total: 4,
            pending: 3,
            current_total: 3,
            current_pending: 2,
            next_pending_case: third.id
          })
          const page = yield* repository.page(owner.leaderboard, "config", { offset: 1, limit: 2 })
          assert.deepStrictEqual(page, [
            {
              id: second.id,
              status: "generated",
              review_state: "confirmed",
              revision: confirmed.next.revision,
              input: second.input,
              current: true,
              created_at: second.created_at,
              updated_at: confirmed.next.updated_at
            },
            // the summary shows the first 200 characters (code points, not UTF-16 units)
            { id: third.id, status: "draft", review_state: "none", revision: 1, input: "😀".repeat(200), current: true, created_at: at(3), updated_at: at(3) }
          ])
          const all = yield* repository.page(owner.leaderboard, "config", { offset: 0, limit: 10 })
          assert.deepStrictEqual(all.map((c) => [c.id, c.current]), [[first.id, false], [second.id, true], [third.id, true], [fourth.id, true]])
          assert.deepStrictEqual(yield* repository.confirmed(owner.leaderboard), [confirmed.next])
        }))
    })
  })
