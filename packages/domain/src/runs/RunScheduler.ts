import { Context, DateTime, Effect, Layer, Option } from "effect"
import { LeaderboardRepository, nextOccurrence, runScheduleOf, schedulesRuns } from "../leaderboards/index.ts"
import { makeLaunch } from "./RunLaunch.ts"
import { RunQueue } from "./RunQueue.ts"
import { RunRepository } from "./RunRepository.ts"

/** What only the cron calls (Jobs.scheduledRuns): due run schedules, and runs a crash left unenqueued. */
export class RunScheduler extends Context.Service<RunScheduler, {
  /**
   * Enqueues again the runs queued for over a minute: a crash between storing a run and enqueueing
   * it leaves one (enqueueing is idempotent: a run whose job exists is left to it). Answers how many.
   */
  readonly requeue: Effect.Effect<number>
  /** Starts the runs whose schedules are due (`run_source: "schedule"`); answers how many started. */
  readonly runSchedules: Effect.Effect<number>
}>()("@podium/domain/runs/RunScheduler") {
  static readonly layer = Layer.effect(
    RunScheduler,
    Effect.gen(function*() {
      const runs = yield* RunRepository
      const queue = yield* RunQueue
      const repository = yield* LeaderboardRepository
      const launch = yield* makeLaunch

      const requeue = Effect.gen(function*() {
        const stale = yield* runs.queuedBefore(DateTime.subtract(yield* DateTime.now, { minutes: 1 }))
        yield* Effect.forEach(stale, queue.enqueue, { discard: true })
        return stale.length
      }).pipe(Effect.withSpan("RunScheduler.requeue"))

      const runSchedules = Effect.gen(function*() {
        const now = yield* DateTime.now
        let started = 0
        for (const leaderboard of yield* repository.dueSchedules(now)) {
          const schedule = runScheduleOf(leaderboard.schedule)
          if (Option.isNone(schedule)) continue
          const next = DateTime.formatIso(nextOccurrence(schedule.value, now))
          // one instance claims each occurrence; a missed or skipped one is not made up later
          if (!(yield* repository.advanceSchedule(leaderboard.id, schedule.value.next_run_at, next))) continue
          if (!schedulesRuns(leaderboard, now)) continue
          const candidates = yield* repository.candidates(leaderboard.id)
          // one leaderboard's trouble never holds the others
          yield* launch(leaderboard, candidates, { run_source: "schedule" }).pipe(
            Effect.tap(() => Effect.sync(() => started++)),
            Effect.catchCause((cause) =>
              Effect.logWarning("scheduled run not started", cause).pipe(Effect.annotateLogs({ leaderboard_id: leaderboard.id }))
            )
          )
        }
        return started
      }).pipe(Effect.withSpan("RunScheduler.runSchedules"))

      return RunScheduler.of({ requeue, runSchedules })
    })
  )
}
