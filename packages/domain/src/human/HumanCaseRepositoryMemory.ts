import { Data, DateTime, Effect, Layer, Option, SynchronizedRef } from "effect"
import { type LeaderboardId, LeaderboardRepository, ServingHistory, servingPolicyOf } from "../leaderboards/index.ts"
import { addUsd, storableText } from "../shared/index.ts"
import { contributionOf } from "./CaseResults.ts"
import { type CaseResponse, caseStatus, reviewState, type Slot, Stage } from "./CaseStage.ts"
import { HumanCase } from "./HumanCase.ts"
import {
  type CaseKey,
  type CaseListItem,
  HumanCaseRepository,
  type Inserted,
  ResponseRefused,
  type ReviewHistoryEntry
} from "./HumanCaseRepository.ts"
import type { CaseId } from "./HumanEval.ts"
import { emptyTally, fromTallies, type Tallies, type Tally } from "./HumanRanking.ts"
import { changesServing, commonVerdicts, humanServing, humanServingEntry, type VerdictCase } from "./HumanServing.ts"

interface StoredCase {
  /** As last written; a generated stage's responses stand for its slots (the answers are stored apart). */
  readonly case: HumanCase
  /** What the case adds to its configuration's tallies (none until an update says so, as in Postgres). */
  readonly contribution: Tallies | undefined
}

interface Tables {
  /** By `keyOf`: client ids are unique per workspace. */
  readonly cases: ReadonlyMap<string, StoredCase>
  readonly responses: ReadonlyMap<string, ReadonlyArray<CaseResponse>>
  readonly history: ReadonlyMap<string, ReadonlyArray<ReviewHistoryEntry>>
}

/** What a Postgres constraint refuses: a defect there, so one here. */
class ConstraintViolated extends Data.Error<{ readonly constraint: string }> {}

const keyOf = (c: CaseKey) => `${c.workspace_id}/${c.id}`

const oldestFirst = (a: StoredCase, b: StoredCase) =>
  DateTime.toEpochMillis(a.case.created_at) - DateTime.toEpochMillis(b.case.created_at) ||
  (a.case.id < b.case.id ? -1 : a.case.id > b.case.id ? 1 : 0)

const slotsOf = (stage: Stage): ReadonlyArray<Slot> =>
  Stage.match(stage, { Draft: () => [], Generating: (s) => s.slots, Generated: (s) => s.responses })

/** The stored answers in the order of the slots, each with its slot's fields; slots not answered yet have none. */
const inSlotOrder = (slots: ReadonlyArray<Slot>, answers: ReadonlyArray<CaseResponse>): Array<CaseResponse> =>
  slots.flatMap(({ candidate_id, candidate_name, label, model_name, platform, response_id }) => {
    const answer = answers.find((a) => a.response_id === response_id)
    return answer === undefined ? [] : [{ ...answer, response_id, candidate_id, label, candidate_name, platform, model_name }]
  })

/** The case as a read finds it: a generated one with its stored answers. */
const caseOf = (tables: Tables, { case: c }: StoredCase): HumanCase =>
  c.stage._tag !== "Generated" ? c : new HumanCase({
    ...c,
    stage: Stage.cases.Generated.make({ ...c.stage, responses: inSlotOrder(c.stage.responses, tables.responses.get(keyOf(c)) ?? []) })
  })

const ofLeaderboard = (tables: Tables, leaderboardId: LeaderboardId) =>
  [...tables.cases.values()].filter((s) => s.case.leaderboard_id === leaderboardId).sort(oldestFirst)

const findIn = (tables: Tables, leaderboardId: LeaderboardId, id: CaseId) =>
  Option.map(Option.fromUndefinedOr(ofLeaderboard(tables, leaderboardId).find((s) => s.case.id === id)), (s) => caseOf(tables, s))

const addTally = (a: Tally, b: Tally): Tally => ({
  correct: a.correct + b.correct,
  total: a.total + b.total,
  cost_sum: addUsd(a.cost_sum, b.cost_sum),
  cost_samples: a.cost_samples + b.cost_samples,
  cost_missing: a.cost_missing + b.cost_missing,
  technical_errors: a.technical_errors + b.technical_errors
})

/** The sum of the contributions of the configuration's cases: what Postgres keeps as counters. */
const talliesIn = (tables: Tables, leaderboardId: LeaderboardId, configuration: string, candidateIds: ReadonlyArray<string>): Tallies => {
  const contributions = ofLeaderboard(tables, leaderboardId).flatMap((s) =>
    s.case.configuration === configuration && s.contribution !== undefined ? [s.contribution] : []
  )
  const sum = (pick: (t: Tallies) => ReadonlyMap<string, Tally>) => {
    const out = new Map<string, Tally>()
    for (const [id, t] of contributions.flatMap((c) => [...pick(c)])) {
      if (candidateIds.includes(id)) out.set(id, addTally(out.get(id) ?? emptyTally, t))
    }
    return out
  }
  return {
    rows: sum((t) => t.rows),
    common: sum((t) => t.common),
    confirmed: contributions.reduce((n, c) => n + c.confirmed, 0),
    comparable: contributions.reduce((n, c) => n + c.comparable, 0)
  }
}

/** The confirmed cases of the configuration, with their responses' verdicts. */
const verdictCasesIn = (tables: Tables, leaderboardId: LeaderboardId, configuration: string): Array<VerdictCase> =>
  ofLeaderboard(tables, leaderboardId).flatMap((s) => {
    const c = caseOf(tables, s)
    if (c.configuration !== configuration || c.stage._tag !== "Generated" || c.stage.review._tag !== "Confirmed") return []
    const verdicts = c.stage.review.verdicts
    return [{
      case_id: c.id,
      responses: c.stage.responses.map((r) => ({
        candidate_id: r.candidate_id,
        status: r.status,
        cost_usd: null,
        verdict: verdicts[r.response_id] ?? null
      }))
    }]
  })

/** `next` over the stored case if that is at `next.revision - 1`, with its history entry; undefined when it is not. */
const written = (tables: Tables, next: HumanCase, entry?: ReviewHistoryEntry): Tables | ConstraintViolated | undefined => {
  const key = keyOf(next)
  const stored = tables.cases.get(key)
  if (stored === undefined || stored.case.revision !== next.revision - 1) return undefined
  // what an update writes; the rest of the case (its input, configuration, …) stays as created
  const { prompt, prompt_override, revision, stage, updated_at } = next
  const updated = { case: new HumanCase({ ...stored.case, prompt, prompt_override, revision, stage, updated_at }), contribution: contributionOf(next) }
  const history = tables.history.get(key) ?? []
  if (entry !== undefined && history.some((h) => h.revision === entry.revision)) {
    return new ConstraintViolated({ constraint: "human_review_history_pkey" })
  }
  return {
    ...tables,
    cases: new Map(tables.cases).set(key, updated),
    history: entry === undefined ? tables.history : new Map(tables.history).set(key, [...history, entry])
  }
}

/**
 * HumanCaseRepository in memory, with the Postgres adapter's semantics. A saved review decides the
 * ranking winner (through the LeaderboardRepository and ServingHistory it is given) under the same
 * lock as the review.
 */
const layer = Layer.effect(
  HumanCaseRepository,
  Effect.gen(function*() {
    const leaderboards = yield* LeaderboardRepository
    const servingHistory = yield* ServingHistory
    const ref = yield* SynchronizedRef.make<Tables>({ cases: new Map(), responses: new Map(), history: new Map() })

    // Each operation yields first, as a round trip to the database would, so that concurrent use
    // cases interleave (and lose races) here as they do against Postgres.
    const read = <A>(f: (tables: Tables) => A) => Effect.andThen(Effect.yieldNow, Effect.map(SynchronizedRef.get(ref), f))
    /** Applies `f` under the lock; a failure or defect of its effect leaves the tables as they were. */
    const write = <A, E>(f: (tables: Tables) => Effect.Effect<readonly [A, Tables], E>) =>
      Effect.andThen(Effect.yieldNow, SynchronizedRef.modifyEffect(ref, f))

    const update = (next: HumanCase, also: (tables: Tables) => Effect.Effect<void>, entry?: ReviewHistoryEntry) =>
      write((tables) => {
        const out = written(tables, next, entry)
        if (out === undefined) return Effect.succeed([false, tables] as const)
        if (out instanceof ConstraintViolated) return Effect.die(out)
        return Effect.as(also(out), [true, out] as const)
      })

    return HumanCaseRepository.of({
      insert: (c) =>
        write((tables): Effect.Effect<readonly [Inserted, Tables]> => {
          if (tables.cases.has(keyOf(c))) {
            return Effect.succeed([{ _tag: "Taken", existing: findIn(tables, c.leaderboard_id, c.id) }, tables] as const)
          }
          const cases = new Map(tables.cases).set(keyOf(c), { case: c, contribution: undefined })
          return Effect.succeed([{ _tag: "Inserted" }, { ...tables, cases }] as const)
        }),
      find: (leaderboardId, id) => read((tables) => findIn(tables, leaderboardId, id)),
      update: (next) => update(next, () => Effect.void),
      saveReview: (next, entry, cohort, serving) =>
        update(next, (tables) =>
          Effect.gen(function*() {
            const current = yield* leaderboards.findServing(next.leaderboard_id)
            if (Option.isNone(current)) return
            const counted = talliesIn(tables, next.leaderboard_id, cohort.configuration, cohort.candidates.map((c) => c.id))
            const policy = servingPolicyOf(current.value.leaderboard)
            const { decision } = humanServing({
              candidates: cohort.candidates,
              ranking: fromTallies(cohort.candidates, counted),
              verdicts: commonVerdicts(cohort.candidates, verdictCasesIn(tables, next.leaderboard_id, cohort.configuration)),
              policy,
              serving: current.value.ranking_winner
            })
            // only a change of what serves is written and recorded (see HumanCaseRepository.saveReview)
            if (!changesServing(decision)) return
            yield* leaderboards.setRankingWinner(next.leaderboard_id, decision.to_candidate_id)
            yield* servingHistory.append(humanServingEntry({
              entry: serving,
              workspace_id: next.workspace_id,
              leaderboard_id: next.leaderboard_id,
              decision,
              policy,
              comparable: counted.comparable
            }))
          }), entry),
      saveResponse: (c, response) =>
        write((tables) => {
          const key = keyOf(c)
          // the foreign key to the case: a response of no stored case is refused, not retried
          if (!tables.cases.has(key)) return Effect.fail(new ResponseRefused({ reason: `case ${c.id} is not stored` }))
          const own = tables.responses.get(key) ?? []
          const repeated = own.some((r) => r.candidate_id === response.candidate_id) ||
            [...tables.responses.values()].some((rs) => rs.some((r) => r.response_id === response.response_id))
          if (repeated) return Effect.succeed([undefined, tables] as const)
          const stored: CaseResponse = {
            ...response,
            output: response.output === null ? null : storableText(response.output),
            error: response.error === null ? null : storableText(response.error)
          }
          return Effect.succeed([undefined, { ...tables, responses: new Map(tables.responses).set(key, [...own, stored]) }] as const)
        }),
      responses: (c) =>
        read((tables) => {
          const stored = tables.cases.get(keyOf(c))
          return stored === undefined ? [] : inSlotOrder(slotsOf(stored.case.stage), tables.responses.get(keyOf(c)) ?? [])
        }),
      counts: (leaderboardId, configuration) =>
        read((tables) => {
          const all = ofLeaderboard(tables, leaderboardId)
          const current = all.filter((s) => s.case.configuration === configuration)
          const pending = (cases: ReadonlyArray<StoredCase>) =>
            cases.reduce((n, s) => n + 1 - (s.contribution?.confirmed ?? 0), 0)
          return {
            total: all.length,
            pending: pending(all),
            current_total: current.length,
            current_pending: pending(current),
            next_pending_case: current.find((s) => reviewState(s.case) !== "confirmed")?.case.id ?? null
          }
        }),
      page: (leaderboardId, configuration, { limit, offset }) =>
        read((tables) =>
          ofLeaderboard(tables, leaderboardId).slice(offset, offset + limit).map(({ case: c }): CaseListItem => ({
            id: c.id,
            status: caseStatus(c),
            review_state: reviewState(c),
            revision: c.revision,
            // Postgres' left(input, 200) counts characters, not UTF-16 units
            input: [...c.input].slice(0, 200).join(""),
            current: c.configuration === configuration,
            created_at: c.created_at,
            updated_at: c.updated_at
          }))
        ),
      tallies: (leaderboardId, configuration, candidateIds) =>
        read((tables) => talliesIn(tables, leaderboardId, configuration, candidateIds)),
      verdictCases: (leaderboardId, configuration) => read((tables) => verdictCasesIn(tables, leaderboardId, configuration)),
      confirmed: (leaderboardId) =>
        read((tables) =>
          ofLeaderboard(tables, leaderboardId).filter((s) => reviewState(s.case) === "confirmed").map((s) => caseOf(tables, s))
        ),
      history: (c, limit) =>
        read((tables) => (tables.history.get(keyOf(c)) ?? []).toSorted((a, b) => b.revision - a.revision).slice(0, limit))
    })
  })
)

export const HumanCaseRepositoryMemory = { layer }
