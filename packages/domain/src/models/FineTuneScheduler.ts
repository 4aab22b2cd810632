import { Context, DateTime, Effect, Layer } from "effect"
import { DatasetRepository } from "../datasets/index.ts"
import { type FineTuneTrigger, isActive } from "./FineTuneRun.ts"
import { makeLaunch, type StartRequest } from "./FineTuneLaunch.ts"
import { FineTuneQueue } from "./FineTuneQueue.ts"
import { FineTuneRepository } from "./FineTuneRepository.ts"
import { type Model, nextFineTune } from "./Model.ts"
import { ModelRepository } from "./ModelRepository.ts"

/** What only the cron calls (Jobs.scheduledFineTunes): due fine-tune schedules, continuous learning, and runs a crash left unenqueued. */
export class FineTuneScheduler extends Context.Service<FineTuneScheduler, {
  /** Enqueues again runs queued for over a minute (a crash between storing and enqueueing). */
  readonly requeue: Effect.Effect<number>
  /** Starts due scheduled fine-tunes and continuous ones whose data changed; answers how many. */
  readonly runSchedules: Effect.Effect<number>
}>()("@podium/domain/models/FineTuneScheduler") {
  static readonly layer = Layer.effect(
    FineTuneScheduler,
    Effect.gen(function*() {
      const modelRepository = yield* ModelRepository
      const runs = yield* FineTuneRepository
      const queue = yield* FineTuneQueue
      const datasets = yield* DatasetRepository
      const launch = yield* makeLaunch
      const now = DateTime.now

      const requeue = Effect.gen(function*() {
        const stale = yield* runs.queuedBefore(DateTime.subtract(yield* now, { minutes: 1 }))
        yield* Effect.forEach(stale, queue.enqueue, { discard: true })
        return stale.length
      }).pipe(Effect.withSpan("FineTuneScheduler.requeue"))

      /** Whether the model's PUSH leaderboards have a consolidated version its newest fine-tune did not learn from. */
      const hasNewData = Effect.fnUntraced(function*(model: Model) {
        const recent = yield* runs.list(model.id, { limit: 20, offset: 0 })
        const [latest] = recent
        if (latest === undefined || isActive(latest.status)) return false
        const learned = new Map((recent.find((r) => r.dataset !== null)?.dataset?.sources ?? []).map((s) => [s.leaderboard_id, s.version]))
        for (const leaderboardId of model.leaderboard_ids) {
          const [version] = yield* datasets.versions(leaderboardId)
          if (version === undefined || version.version <= (learned.get(leaderboardId) ?? 0)) continue
          // a fine-tune that failed before reading its rows already had this version: not again until a newer one
          if (latest.dataset === null && DateTime.isLessThanOrEqualTo(version.created_at, latest.created_at)) continue
          return true
        }
        return false
      })

      const runSchedules = Effect.gen(function*() {
        let started = 0
        const launched = (model: Model, trigger: FineTuneTrigger, request: StartRequest) =>
          launch(model, trigger, request).pipe(
            Effect.tap(() => Effect.sync(() => started++)),
            // one model's trouble never holds the others
            Effect.catchCause((cause) =>
              Effect.logWarning(`${trigger} fine-tune not started`, cause).pipe(Effect.annotateLogs({ model_id: model.id }))
            )
          )
        const at = yield* now
        for (const model of yield* modelRepository.dueSchedules(at)) {
          const schedule = model.fine_tune_schedule
          if (schedule === null || model.next_fine_tune_at === null) continue
          const next = nextAfter(schedule.run.type, model.next_fine_tune_at, at)
          // one instance claims each occurrence; missed ones are not made up
          if (!(yield* modelRepository.advanceSchedule(model.id, model.next_fine_tune_at, next))) continue
          yield* launched(model, "schedule", { dataset_size: schedule.dataset })
        }
        for (const model of yield* modelRepository.continuous) {
          if (!model.fine_tuned) continue
          if (yield* hasNewData(model).pipe(Effect.orElseSucceed(() => false))) yield* launched(model, "continuous", {})
        }
        return started
      }).pipe(Effect.withSpan("FineTuneScheduler.runSchedules"))


      return FineTuneScheduler.of({ requeue, runSchedules })
    })
  )
}

/** The first occurrence after `now` of a schedule last due at `due` (occurrences missed meanwhile are skipped). */
const nextAfter = (type: "DAILY" | "WEEKLY" | "MONTHLY", due: DateTime.Utc, at: DateTime.Utc): DateTime.Utc => {
  let next = nextFineTune(type, due)
  while (DateTime.isLessThanOrEqualTo(next, at)) next = nextFineTune(type, next)
  return next
}
