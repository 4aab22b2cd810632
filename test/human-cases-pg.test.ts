import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, Exit, Layer, Option, Result } from "effect"
import { SqlClient } from "effect/sql"
import { ChangeFeed } from "@podium/adapters-pg/ChangeFeedPg"
import { HumanCaseRepositoryPg } from "@podium/adapters-pg/human/HumanCaseRepositoryPg"
import { LeaderboardRepositoryPg } from "@podium/adapters-pg/leaderboards/LeaderboardRepositoryPg"
import { ServingHistoryPg } from "@podium/adapters-pg/leaderboards/ServingHistoryPg"
import { layerMigrations } from "@podium/adapters-pg/Migrations"
import {
  type CaseResponse,
  claim,
  complete,
  createCase,
  HumanCase,
  saveReview,
  slotsFor,
  CaseId,
  ResponseId,
  type RankedCase,
  tally,
  HumanCaseRepository,
} from "@podium/domain/human"
import { WorkspaceId } from "@podium/domain/shared"
import { LeaderboardId } from "@podium/domain/leaderboards"
import { CandidateId, ServingEntryId } from "@podium/domain/leaderboards"
import fc from "fast-check"
import { TestDatabase } from "./support/database.ts"

// The repository's own guarantees, against real Postgres: ids used once, the revision-conditional
// update that makes the generation claim atomic, responses saved once, verdicts and history, and a
// review saved together with the ranking winner it makes.

const Database = HumanCaseRepositoryPg.layer.pipe(
  Layer.provide(Layer.merge(LeaderboardRepositoryPg.layer, ServingHistoryPg.layer)),
  Layer.provide(ChangeFeed.layer),
  Layer.provideMerge(layerMigrations),
  Layer.provideMerge(TestDatabase.layer)
)

const t0 = DateTime.makeUnsafe("2026-11-22T10:00:00.000Z")
/** A fresh serving-history entry's id, time and actor, for a review that changes the winner. */
const servingEntry = () => ({ id: ServingEntryId.make(crypto.randomUUID()), at: t0, actor: { type: "system" as const, id: "test" } })
const candidates = [1, 2, 3].map((n) => ({
  id: CandidateId.make(crypto.randomUUID()),
  name: `model ${n}`,
  platform: "Router" as const,
  model_name: `vendor/m${n}`
}))

/** A workspace and a leaderboard for the cases to belong to. */
const owner = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const workspace = WorkspaceId.make(crypto.randomUUID())
  const leaderboard = LeaderboardId.make(crypto.randomUUID())
  yield* sql`INSERT INTO workspaces (id, name, created_at) VALUES (${workspace}, 'human', now())`
  yield* sql`INSERT INTO leaderboards (id, workspace_id, name, description, status, chosen_model_strategy, schedule,
               challenge, extra, created_at, updated_at)
             VALUES (${leaderboard}, ${workspace}, 'human', '', 'active', 'ranking_winner', '{}', '{}', '{}', now(), now())`
  return { workspace, leaderboard }
})

const draft = (workspace: WorkspaceId, leaderboard: LeaderboardId, input = "Refund window?"): HumanCase =>
  Result.getOrThrow(createCase({
    id: CaseId.make(crypto.randomUUID()),
    input,
    leaderboardId: leaderboard,
    workspaceId: workspace,
    basePrompt: "Be brief.",
    attachments: [],
    configuration: "config",
    now: t0
  }))

const responded = (c: HumanCase): ReadonlyArray<CaseResponse> =>
  c.stage._tag !== "Generating" ? [] : c.stage.slots.map((slot, i) => ({
    ...slot,
    status: i === 1 ? "failed" : "succeeded",
    output: i === 1 ? null : `answer ${slot.label}`,
    error: i === 1 ? "the router answered 500" : null,
    latency_ms: 10,
    usage: i === 1 ? null : { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    cost_usd: i === 1 ? null : 0.002,
    trace_id: null,
    created_at: t0
  }))

/** `c` claimed as `claimId`, its slots' candidates in the given order. */
const claimOf = (c: HumanCase, claimId = "k", order = [0, 1, 2]): HumanCase =>
  Result.getOrThrow(claim(c, {
    configuration: "config",
    claimId,
    slots: slotsFor(candidates, candidates.map(() => ResponseId.make(crypto.randomUUID())), order)
  }, t0))

/** A case of the leaderboard generated with every candidate answering, slot i for candidate i. */
const generated = (workspace: WorkspaceId, leaderboard: LeaderboardId) =>
  Effect.gen(function*() {
    const repo = yield* HumanCaseRepository
    const c = draft(workspace, leaderboard)
    yield* repo.insert(c)
    const claimed = claimOf(c)
    yield* repo.update(claimed)
    const answers = responded(claimed).map((r): CaseResponse => ({ ...r, status: "succeeded", output: "ok", error: null }))
    yield* Effect.forEach(answers, (r) => repo.saveResponse(c, r))
    const done = Result.getOrThrow(complete(claimed, { claimId: "k", responses: answers }, t0))
    yield* repo.update(done)
    return done
  })

/** `c` confirmed with only candidate `correct`'s answer judged correct, and its history entry. */
const confirmedWith = (c: HumanCase, correct: number) => {
  const responses = c.stage._tag === "Generated" ? c.stage.responses : []
  const verdicts = Object.fromEntries(responses.map((r, i) => [r.response_id, i === correct ? "correct" : "incorrect"] as const))
  const review = { verdicts, reference: "", notes: "" }
  const next = Result.getOrThrow(saveReview(c, { revision: c.revision, confirm: true, review }, t0))
  return { next, entry: { revision: next.revision, confirmed: true, review, saved_by: null, saved_at: t0 } }
}

const cohort = { configuration: "config", candidates }

const recordedWinner = (leaderboard: LeaderboardId) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ winner: string | null }>`SELECT ranking_winner_id::text AS winner FROM leaderboards WHERE id = ${leaderboard}`
    return row!.winner
  })

/** The leaderboard's serving-history entries, oldest first. */
const servingEntries = (leaderboard: LeaderboardId) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ kind: string; from_candidate_id: string | null; to_candidate_id: string | null }>`
      SELECT kind, from_candidate_id::text AS from_candidate_id, to_candidate_id::text AS to_candidate_id
      FROM leaderboard_serving_history WHERE leaderboard_id = ${leaderboard} ORDER BY at, id`
  })

describe("HumanCaseRepositoryPg.layer", () => {
  it.layer(Database, { timeout: 60_000 })((it) => {
    it.effect("stores a draft once; the same id again finds what is stored", () =>
      Effect.gen(function*() {
        const repo = yield* HumanCaseRepository
        const { leaderboard, workspace } = yield* owner
        const c = draft(workspace, leaderboard)
        assert.deepStrictEqual(yield* repo.insert(c), { _tag: "Inserted" })
        const again = yield* repo.insert(new HumanCase({ ...draft(workspace, leaderboard, "another input"), id: c.id }))
        assert.strictEqual(again._tag, "Taken")
        assert.deepStrictEqual(again._tag === "Taken" ? Option.getOrThrow(again.existing) : undefined, c)
        assert.deepStrictEqual(Option.getOrThrow(yield* repo.find(leaderboard, c.id)), c)
        assert.isTrue(Option.isNone(yield* repo.find(LeaderboardId.make(crypto.randomUUID()), c.id)))
      }))

    it.effect("of 20 simultaneous claims of one draft exactly one is stored", () =>
      Effect.gen(function*() {
        const repo = yield* HumanCaseRepository
        const { leaderboard, workspace } = yield* owner
        const c = draft(workspace, leaderboard)
        yield* repo.insert(c)
        const attempts = Array.from({ length: 20 }, (_, i) => claimOf(c, `claim-${i}`))
        const won = yield* Effect.forEach(attempts, (attempt) => repo.update(attempt), { concurrency: "unbounded" })
        assert.strictEqual(won.filter(Boolean).length, 1)
        const stored = Option.getOrThrow(yield* repo.find(leaderboard, c.id))
        const winner = attempts[won.indexOf(true)]!
        assert.deepStrictEqual(stored, winner)
      }))

    it.effect("keeps the first save of a response, then completes, reviews and keeps the history", () =>
      Effect.gen(function*() {
        const repo = yield* HumanCaseRepository
        const sql = yield* SqlClient.SqlClient
        const { leaderboard, workspace } = yield* owner
        const c = draft(workspace, leaderboard)
        yield* repo.insert(c)
        const claimed = claimOf(c, "k", [2, 0, 1])
        assert.isTrue(yield* repo.update(claimed))
        const answers = responded(claimed)
        yield* repo.saveResponse(c, answers[0]!)
        yield* repo.saveResponse(c, { ...answers[0]!, output: "a second, repeated activity" })
        assert.deepStrictEqual(yield* repo.responses(c), [answers[0]!])
        yield* Effect.forEach(answers.slice(1), (r) => repo.saveResponse(c, r))

        const generated = Result.getOrThrow(complete(claimed, { claimId: "k", responses: yield* repo.responses(c) }, t0))
        assert.isTrue(yield* repo.update(generated))
        assert.isFalse(yield* repo.update(generated)) // its revision is taken now
        assert.deepStrictEqual(Option.getOrThrow(yield* repo.find(leaderboard, c.id)), generated)

        const verdicts = { [answers[0]!.response_id]: "correct" as const, [answers[2]!.response_id]: "abstain" as const }
        const review = { verdicts, reference: "30 days", notes: "" }
        const confirmed = Result.getOrThrow(saveReview(generated, { revision: generated.revision, confirm: true, review }, t0))
        const entry = { revision: confirmed.revision, confirmed: true, review, saved_by: null, saved_at: t0 }
        assert.isTrue(yield* repo.saveReview(confirmed, entry, { configuration: "config", candidates }, servingEntry()))
        assert.deepStrictEqual(Option.getOrThrow(yield* repo.find(leaderboard, c.id)), confirmed)
        const stored = yield* sql<{ label: string; verdict: string | null }>`
          SELECT label, verdict FROM human_responses WHERE case_id = ${c.id} ORDER BY label`
        assert.deepStrictEqual(stored.map((r) => r.verdict), answers.map((a) => verdicts[a.response_id] ?? null))
        const history = yield* repo.history(c, 100)
        assert.deepStrictEqual(history, [{ revision: confirmed.revision, confirmed: true, review, saved_by: null, saved_at: t0 }])
      }))

    it.effect("the ranking's counters in Postgres equal HumanRanking.tally over the cases as they end up", () =>
      Effect.gen(function*() {
        const repo = yield* HumanCaseRepository
        const verdict = fc.constantFrom("correct" as const, "incorrect" as const, "abstain" as const)
        const review = fc.record({ confirm: fc.boolean(), verdicts: fc.array(verdict, { minLength: 3, maxLength: 3 }) })
        const dataset = fc.array(fc.record({
          responses: fc.array(fc.record({
            failed: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
            cost: fc.option(fc.integer({ min: 0, max: 1000 }).map((n) => n / 1e5), { nil: null })
          }), { minLength: 3, maxLength: 3 }),
          // each case is reviewed 0–3 times: confirmations, withdrawals, changed verdicts
          reviews: fc.array(review, { maxLength: 3 })
        }), { maxLength: 12 })
        for (const cases of fc.sample(dataset, { numRuns: 10, seed: 42 })) {
          const { leaderboard, workspace } = yield* owner
          const ranked: Array<RankedCase> = []
          for (const spec of cases) {
            const c = draft(workspace, leaderboard)
            yield* repo.insert(c)
            const claimed = claimOf(c)
            yield* repo.update(claimed)
            const slots = claimed.stage._tag === "Generating" ? claimed.stage.slots : []
            const answers = slots.map((slot, i): CaseResponse => ({
              ...slot,
              status: spec.responses[i]!.failed ? "failed" : "succeeded",
              output: spec.responses[i]!.failed ? null : "ok",
              error: spec.responses[i]!.failed ? "boom" : null,
              latency_ms: 1,
              usage: null,
              cost_usd: spec.responses[i]!.failed ? null : spec.responses[i]!.cost,
              trace_id: null,
              created_at: t0
            }))
            yield* Effect.forEach(answers, (r) => repo.saveResponse(c, r))
            let current = Result.getOrThrow(complete(claimed, { claimId: "k", responses: answers }, t0))
            yield* repo.update(current)
            for (const r of spec.reviews) {
              const verdicts = Object.fromEntries(
                answers.flatMap((a, i) => (a.status === "succeeded" ? [[a.response_id, r.verdicts[i]!]] : []))
              )
              current = Result.getOrThrow(saveReview(current, {
                revision: current.revision,
                confirm: r.confirm,
                review: { verdicts, reference: "", notes: "" }
              }, t0))
              assert.isTrue(yield* repo.update(current))
            }
            const finalReview = current.stage._tag === "Generated" ? current.stage.review : undefined
            const finalVerdicts = finalReview === undefined || finalReview._tag === "Unreviewed" ? {} : finalReview.verdicts
            ranked.push({
              confirmed: finalReview?._tag === "Confirmed",
              responses: answers.map((a) => ({
                candidate_id: a.candidate_id,
                status: a.status,
                cost_usd: a.cost_usd,
                verdict: finalVerdicts[a.response_id] ?? null
              }))
            })
          }
          const ids = candidates.map((c) => c.id as string)
          const fromSql = yield* repo.tallies(leaderboard, "config", ids)
          const expected = tally(candidates, ranked)
          assert.strictEqual(fromSql.confirmed, expected.confirmed)
          assert.strictEqual(fromSql.comparable, expected.comparable)
          for (const which of ["rows", "common"] as const) {
            for (const id of ids) {
              const empty = { correct: 0, total: 0, cost_sum: 0, cost_samples: 0, cost_missing: 0, technical_errors: 0 }
              const { cost_sum: gotCost, ...gotCounts } = fromSql[which].get(id) ?? empty
              const { cost_sum: wantCost, ...wantCounts } = expected[which].get(id) ?? empty
              assert.deepStrictEqual(gotCounts, wantCounts, `${which} ${id}`)
              assert.closeTo(gotCost, wantCost, 1e-9)
            }
          }
        }
      }), 120_000)

    it.effect("a review and the ranking winner it makes are saved together, or neither is", () =>
      Effect.gen(function*() {
        const repo = yield* HumanCaseRepository
        const sql = yield* SqlClient.SqlClient
        const { leaderboard, workspace } = yield* owner
        const c = yield* generated(workspace, leaderboard)
        const { entry, next } = confirmedWith(c, 0)

        // while the database refuses every winner, the review is refused with it
        yield* sql`ALTER TABLE leaderboards ADD CONSTRAINT winner_refused CHECK (ranking_winner_id IS NULL) NOT VALID`
        const refused = yield* Effect.exit(repo.saveReview(next, entry, cohort, servingEntry())).pipe(
          Effect.ensuring(sql`ALTER TABLE leaderboards DROP CONSTRAINT winner_refused`.pipe(Effect.orDie))
        )
        assert.isTrue(Exit.isFailure(refused))
        assert.deepStrictEqual(Option.getOrThrow(yield* repo.find(leaderboard, c.id)), c)
        assert.deepStrictEqual(yield* repo.history(c, 100), [])
        assert.strictEqual((yield* repo.tallies(leaderboard, "config", candidates.map((x) => x.id))).confirmed, 0)
        assert.isNull(yield* recordedWinner(leaderboard))

        assert.deepStrictEqual(yield* servingEntries(leaderboard), [])

        assert.isTrue(yield* repo.saveReview(next, entry, cohort, servingEntry()))
        assert.deepStrictEqual(Option.getOrThrow(yield* repo.find(leaderboard, c.id)), next)
        // the serving policy's first winner, recorded in the same transaction
        const entries = yield* servingEntries(leaderboard)
        assert.deepStrictEqual(entries.map((e) => [e.kind, e.from_candidate_id]), [["human", null]])
        assert.isNotNull(yield* recordedWinner(leaderboard))
        assert.strictEqual(yield* recordedWinner(leaderboard), entries[0]!.to_candidate_id)
      }))

    it.effect("simultaneous first reviews name one winner, once: each decides on what the last one left", () =>
      Effect.gen(function*() {
        const repo = yield* HumanCaseRepository
        for (let round = 0; round < 5; round++) {
          const { leaderboard, workspace } = yield* owner
          const cases = yield* Effect.forEach(Array.from({ length: 4 }), () => generated(workspace, leaderboard))
          // at once, with nothing serving, each case judges one candidate correct: 0 twice, 1 and 2 once.
          // Without the lock two saves could both read "nothing serves" and both decide `first`.
          const saved = yield* Effect.forEach(cases, (c, n) => {
            const { entry, next } = confirmedWith(c, [0, 1, 0, 2][n]!)
            return repo.saveReview(next, entry, cohort, servingEntry())
          }, { concurrency: "unbounded" })
          assert.deepStrictEqual(saved, cases.map(() => true))
          const entries = yield* servingEntries(leaderboard)
          assert.deepStrictEqual(entries.map((e) => [e.kind, e.from_candidate_id]), [["human", null]])
          assert.strictEqual(yield* recordedWinner(leaderboard), entries[0]!.to_candidate_id)
        }
      }))
  })
})
