import { Context, DateTime, Duration, Effect, Layer, Option, Schedule } from "effect"
import type { Principal } from "../access/index.ts"
import { labellerName, Labellers, type ReadyLabeller } from "../datasets/index.ts"
import type { ChatProviderFailed } from "../inference/index.ts"
import { type Leaderboard, LeaderboardArchived, type LeaderboardId, LeaderboardRepository, Leaderboards } from "../leaderboards/index.ts"
import { IdGenerator, type NotFound, storableText } from "../shared/index.ts"
import { Improvement, ImprovementId, improvementTargets } from "./Improvement.ts"
import { ImprovementQueue } from "./ImprovementQueue.ts"
import { ImprovementRepository, type StoredTarget } from "./ImprovementRepository.ts"
import { inputKey } from "./Run.ts"
import type { DatasetUnavailable } from "./RunDatasetSource.ts"
import { RunDatasets } from "./RunDatasets.ts"
import { DatasetMissing, NotRunnable } from "./RunErrors.ts"
import { mapRows } from "./RunRows.ts"
import { referenceRequest } from "./Improvement.ts"

/** Targets one step of a job takes (one durable activity). */
export const improvePageSize = 32

const retryable = (error: ChatProviderFailed) =>
  error.upstream_status === null || error.upstream_status === 429 || error.upstream_status >= 500

const backoff = Schedule.exponential(Duration.millis(250)).pipe(Schedule.jittered)

/**
 * Improve-dataset: the leaderboard's labeller (its judge model, else its serving candidate, as for
 * auto-labels) proposes references for rows without one (and, with
 * `replace_references`, for rows the latest run's candidates disagree on), published as the
 * leaderboard's next derived version, which runs read over the dataset's rows. A durable job; each
 * step is safe to repeat.
 */
export class DatasetImprovements extends Context.Service<DatasetImprovements, {
  readonly start: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    request: { readonly replace_references?: boolean | undefined }
  ) => Effect.Effect<Improvement, NotFound | LeaderboardArchived | NotRunnable | DatasetMissing>
  /**
   * For a run with `improve_dataset`: improves the dataset now, in the run's step (joining the
   * leaderboard's running job if there is one). Without a labeller it does nothing; a job that cannot
   * read the dataset fails (the run's own step reports why).
   */
  readonly improveNow: (leaderboardId: LeaderboardId) => Effect.Effect<void>
  /** Step 1: reads the dataset and stores the targets. */
  readonly prepare: (jobId: ImprovementId) => Effect.Effect<void, DatasetUnavailable | DatasetMissing>
  /** Step 2, per page: proposes references for the targets after `after`; the page's last index, or null when done. */
  readonly improvePage: (jobId: ImprovementId, after: number) => Effect.Effect<number | null>
  readonly publish: (jobId: ImprovementId) => Effect.Effect<void>
  readonly fail: (jobId: ImprovementId, error: string) => Effect.Effect<void>
  readonly latest: (principal: Principal, leaderboardId: LeaderboardId) => Effect.Effect<Option.Option<Improvement>, NotFound>
}>()("@podium/domain/runs/DatasetImprovements") {
  static readonly layer = Layer.effect(
    DatasetImprovements,
    Effect.gen(function*() {
      const repository = yield* ImprovementRepository
      const queue = yield* ImprovementQueue
      const leaderboards = yield* Leaderboards
      const stored = yield* LeaderboardRepository
      const datasets = yield* RunDatasets
      const labellers = yield* Labellers
      const ids = yield* IdGenerator

      const create = Effect.fnUntraced(function*(leaderboard: Leaderboard, replace: boolean) {
        const found = yield* labellers.of(leaderboard.id)
        if (Option.isNone(found)) return Option.none<Improvement>()
        const job = yield* repository.start(new Improvement({
          id: yield* ids.make(ImprovementId),
          leaderboard_id: leaderboard.id,
          status: "running",
          labeller: labellerName(found.value.labeller),
          replace_references: replace,
          total: 0,
          improved: 0,
          failed: 0,
          version: null,
          error: null,
          created_at: yield* DateTime.now,
          finished_at: null
        }))
        return Option.some(job)
      })

      const start = Effect.fn("DatasetImprovements.start")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        request: { readonly replace_references?: boolean | undefined }
      ) {
        const { leaderboard } = yield* leaderboards.get(principal, leaderboardId)
        if (leaderboard.status === "archived") return yield* new LeaderboardArchived({ leaderboard_id: leaderboardId })
        if (leaderboard.challenge.eval_type === "human") {
          return yield* new NotRunnable({ leaderboard_id: leaderboardId, message: "A human leaderboard's references come from its reviewers" })
        }
        const { dataset_type, dataset_url } = leaderboard.challenge
        if (dataset_type === "GET" && (dataset_url === null || dataset_url.trim() === "")) {
          return yield* new DatasetMissing({ leaderboard_id: leaderboardId, message: "Set dataset_url first" })
        }
        const job = yield* create(leaderboard, request.replace_references ?? false)
        if (Option.isNone(job)) {
          return yield* new NotRunnable({
            leaderboard_id: leaderboardId,
            message: "Improving the dataset needs a labeller: set judge_provider (router or hub) and judge_model, or " +
              "a candidate that serves (chosen_leaderboard_model_id)"
          })
        }
        if (job.value.status === "running") yield* queue.enqueue(job.value)
        return job.value
      })

      const jobOf = (jobId: ImprovementId) =>
        Effect.flatMap(repository.find(jobId), Option.match({
          onNone: () => Effect.die(new Error(`improve-dataset job ${jobId} is gone`)),
          onSome: Effect.succeed
        }))

      const leaderboardOf = (job: Improvement) =>
        Effect.flatMap(stored.find(job.leaderboard_id), Option.match({
          onNone: () => Effect.die(new Error(`the leaderboard of improve-dataset job ${job.id} is gone`)),
          onSome: Effect.succeed
        }))

      const prepare = Effect.fn("DatasetImprovements.prepare")(function*(jobId: ImprovementId) {
        const job = yield* jobOf(jobId)
        if (job.status !== "running") return
        const leaderboard = yield* leaderboardOf(job)
        const { rows } = mapRows((yield* datasets.load(leaderboard)).raw)
        const answers = yield* repository.latestAnswers(leaderboard.id)
        // a reference improved before counts as the row's own: it is proposed again only where candidates disagree
        const improved = yield* repository.references(leaderboard.id, rows.map(inputKey))
        const chosen = improvementTargets(
          rows.map((row, index) => ({
            ...row,
            index,
            reference: improved.get(inputKey(row))?.reference ?? row.reference,
            answers: answers.get(inputKey(row)) ?? []
          })),
          job.replace_references
        )
        // one target per input: the same question asked twice gets one reference
        const seen = new Set<string>()
        const unique: Array<StoredTarget> = []
        for (const target of chosen) {
          const key = inputKey(target)
          if (seen.has(key)) continue
          seen.add(key)
          unique.push({ ...target, index: unique.length, key })
        }
        yield* repository.prepare(jobId, unique)
      })

      const propose = (jobId: ImprovementId, ask: ReadyLabeller["ask"]) => (row: StoredTarget) =>
        Effect.gen(function*() {
          const answer = yield* ask(referenceRequest(row)).pipe(
            Effect.retry({ schedule: backoff, times: 3, while: retryable }),
            Effect.option
          )
          const output = Option.flatMap(answer, (a) => Option.fromNullishOr(a.output))
          yield* repository.propose(
            jobId,
            row.index,
            Option.isSome(output) && output.value.trim() !== "" ? storableText(output.value.trim()) : null
          )
        })

      const improvePage = Effect.fn("DatasetImprovements.improvePage")(function*(jobId: ImprovementId, after: number) {
        const job = yield* jobOf(jobId)
        if (job.status !== "running") return null
        const page = yield* repository.pending(jobId, after, improvePageSize)
        if (page.length === 0) return null
        const found = yield* labellers.of(job.leaderboard_id)
        if (Option.isNone(found)) {
          yield* Effect.forEach(page, (row) => repository.propose(jobId, row.index, null), { discard: true })
        } else {
          yield* Effect.forEach(page, propose(jobId, found.value.ask), { concurrency: 4, discard: true })
        }
        return page[page.length - 1]!.index
      })

      const publish = Effect.fn("DatasetImprovements.publish")(function*(jobId: ImprovementId) {
        yield* repository.publish(jobId, yield* DateTime.now)
      })

      const fail = Effect.fn("DatasetImprovements.fail")(function*(jobId: ImprovementId, error: string) {
        yield* repository.fail(jobId, storableText(error), yield* DateTime.now)
      })

      const latest = Effect.fn("DatasetImprovements.latest")(function*(principal: Principal, leaderboardId: LeaderboardId) {
        yield* leaderboards.get(principal, leaderboardId)
        return yield* repository.latest(leaderboardId)
      })

      const improveNow = Effect.fn("DatasetImprovements.improveNow")(function*(leaderboardId: LeaderboardId) {
        const leaderboard = yield* stored.find(leaderboardId)
        if (Option.isNone(leaderboard)) return
        const job = yield* create(leaderboard.value, false)
        if (Option.isNone(job) || job.value.status !== "running") return
        const id = job.value.id
        yield* prepare(id).pipe(
          Effect.andThen(Effect.gen(function*() {
            for (let after: number | null = -1; after !== null;) after = yield* improvePage(id, after)
            yield* publish(id)
          })),
          Effect.catch((error) => fail(id, error._tag === "DatasetMissing" ? error.message : `dataset: ${error.reason}`))
        )
      })

      return DatasetImprovements.of({ start, improveNow, prepare, improvePage, publish, fail, latest })
    })
  )
}
