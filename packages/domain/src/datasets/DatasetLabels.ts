import { Context, DateTime, Duration, Effect, Layer, Option, Schedule } from "effect"
import { type Principal } from "../access/index.ts"
import { buildMessages, type ChatCompletion, type ChatProviderFailed, type ChatRequest } from "../inference/index.ts"
import { LeaderboardArchived, type LeaderboardId, Leaderboards } from "../leaderboards/index.ts"
import { IdGenerator, NotFound, storableText } from "../shared/index.ts"
import { NoLabeller, NotPushDataset } from "./DatasetErrors.ts"
import { DatasetLabelQueue } from "./DatasetLabelQueue.ts"
import { DatasetLabelRepository, type UnlabelledRow } from "./DatasetLabelRepository.ts"
import { DatasetRepository } from "./DatasetRepository.ts"
import { LabelJob, LabelJobId, labellerName, promptInputOf } from "./LabelJob.ts"
import { Labellers } from "./Labellers.ts"

/** Rows one step of a job takes (one durable activity): what a restart may have to redo. */
export const labelPageSize = 32

/** Labeller calls in flight at once, per job. */
export const labelConcurrency = 4

/** A call that failed for a passing reason (time-out, refused connection, 429, 5xx) is tried this often in all. */
export const labelAttempts = 4

const retryable = (error: ChatProviderFailed) =>
  error.upstream_status === null || error.upstream_status === 429 || error.upstream_status >= 500

const backoff = Schedule.exponential(Duration.millis(200)).pipe(Schedule.jittered)

/**
 * Auto-labels: a durable job that asks the labeller for the missing references of the latest
 * version's rows, a page at a time, and publishes them as a new version.
 */
export class DatasetLabels extends Context.Service<DatasetLabels, {
  readonly start: (
    principal: Principal,
    id: LeaderboardId
  ) => Effect.Effect<LabelJob, NotFound | NotPushDataset | LeaderboardArchived | NoLabeller>
  /** Labels the next page after `afterId`; answers the page's last row id, or null when no rows are left. */
  readonly labelPage: (jobId: LabelJobId, afterId: string | null) => Effect.Effect<string | null>
  readonly publish: (jobId: LabelJobId) => Effect.Effect<void>
  readonly fail: (jobId: LabelJobId, error: string) => Effect.Effect<void>
  /** The leaderboard's newest job, for the status answer (whose caller is already authorised). */
  readonly latest: (leaderboardId: LeaderboardId) => Effect.Effect<Option.Option<LabelJob>>
}>()("@podium/domain/datasets/DatasetLabels") {
  static readonly layer = Layer.effect(
    DatasetLabels,
    Effect.gen(function*() {
      const labels = yield* DatasetLabelRepository
      const datasets = yield* DatasetRepository
      const queue = yield* DatasetLabelQueue
      const leaderboards = yield* Leaderboards
      const labellers = yield* Labellers
      const ids = yield* IdGenerator

      const start = Effect.fn("DatasetLabels.start")(function*(principal: Principal, id: LeaderboardId) {
        const { leaderboard } = yield* leaderboards.serving(principal, id)
        if (leaderboard.challenge.dataset_type !== "PUSH") return yield* new NotPushDataset({ leaderboard_id: id })
        if (leaderboard.status === "archived") return yield* new LeaderboardArchived({ leaderboard_id: id })
        const [latest] = yield* datasets.versions(id)
        if (latest === undefined) return yield* new NotFound({ resource: "dataset version", id: "latest" })
        const found = yield* labellers.of(id)
        if (Option.isNone(found)) return yield* new NoLabeller({ leaderboard_id: id })
        const job = yield* labels.start(new LabelJob({
          id: yield* ids.make(LabelJobId),
          leaderboard_id: id,
          base_version: latest.version,
          labeller: labellerName(found.value.labeller),
          status: "running",
          total: yield* labels.countUnlabelled(id, latest.version),
          labelled: 0,
          failed: 0,
          version: null,
          error: null,
          created_at: yield* DateTime.now,
          finished_at: null
        }))
        if (job.status === "running") yield* queue.enqueue(job)
        return job
      })

      const job = (jobId: LabelJobId) =>
        Effect.flatMap(labels.find(jobId), Option.match({
          onNone: () => Effect.die(new Error(`auto-labels job ${jobId} is gone`)),
          onSome: Effect.succeed
        }))

      /** One row: the labeller's answer to the row's prompt, retried while the failure may pass. */
      const labelRow = (
        current: LabelJob,
        ask: (request: ChatRequest) => Effect.Effect<ChatCompletion, ChatProviderFailed>,
        challenge: { system_prompt: string | null; model_prompt: string | null }
      ) =>
      (row: UnlabelledRow) =>
        Effect.gen(function*() {
          const prompt = buildMessages(promptInputOf(row.data), challenge)
          if (prompt._tag === "Failure") return yield* labels.countFailure(current)
          const answer = yield* ask({ messages: prompt.success.messages }).pipe(
            Effect.retry({ schedule: backoff, times: labelAttempts - 1, while: retryable }),
            Effect.option
          )
          const output = Option.flatMap(answer, (a) => Option.fromNullishOr(a.output))
          if (Option.isNone(output) || output.value.trim() === "") return yield* labels.countFailure(current)
          // the labeller's words are stored as text Postgres can hold (U+0000 and lone surrogates replaced)
          yield* labels.saveLabel(current, row.id, storableText(output.value), yield* DateTime.now)
        })

      const labelPage = Effect.fn("DatasetLabels.labelPage")(function*(jobId: LabelJobId, afterId: string | null) {
        const current = yield* job(jobId)
        if (current.status !== "running") return null
        const rows = yield* labels.unlabelled(current, afterId, labelPageSize)
        if (rows.length === 0) return null
        const found = yield* labellers.of(current.leaderboard_id)
        if (Option.isNone(found)) {
          yield* Effect.forEach(rows, () => labels.countFailure(current), { discard: true })
        } else {
          yield* Effect.forEach(rows, labelRow(current, found.value.ask, found.value.leaderboard.challenge), {
            concurrency: labelConcurrency,
            discard: true
          })
        }
        return rows[rows.length - 1]!.id
      })

      const publish = Effect.fn("DatasetLabels.publish")(function*(jobId: LabelJobId) {
        const current = yield* job(jobId)
        const version = yield* labels.publish(current, yield* DateTime.now)
        if (Option.isSome(version)) yield* datasets.hash(current.leaderboard_id, version.value)
      })

      const fail = Effect.fn("DatasetLabels.fail")(function*(jobId: LabelJobId, error: string) {
        yield* labels.fail(yield* job(jobId), error, yield* DateTime.now)
      })

      return DatasetLabels.of({ start, labelPage, publish, fail, latest: labels.latest })
    })
  )
}
