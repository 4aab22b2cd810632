import { DateTime, Effect, Option } from "effect"
import { type FineTuneRunId, storableText } from "../shared/index.ts"
import { type FineTuneEvent, type FineTuneRun, maxEvents } from "./FineTuneRun.ts"
import { FineTuningApi, type FineTuningFailed, type RemoteEvent } from "./FineTuningApi.ts"
import { FineTuneRepository } from "./FineTuneRepository.ts"
import { TrainingFailed } from "./ModelErrors.ts"

/**
 * What the fine-tune steps (FineTuneSteps) and a person's sync (FineTunes) share: the run as stored,
 * its events, and the remote job it may have (looked at, or cancelled). Built inside each layer.
 */
export const makeRemote = Effect.gen(function*() {
  const runs = yield* FineTuneRepository
  const api = yield* FineTuningApi

  const runOf = (runId: FineTuneRunId) =>
    Effect.flatMap(runs.find(runId), Option.match({
      onNone: () => Effect.die(new Error(`fine-tune run ${runId} is gone`)),
      onSome: Effect.succeed
    }))

  const now = DateTime.now
  const event = (level: string, message: string) =>
    Effect.map(now, (at): FineTuneEvent => ({ at: DateTime.formatIso(at), level, message: storableText(message) }))

  /** The run's events with `more` merged in (the same event is kept once), oldest first, the newest `maxEvents`. */
  const withEvents = (run: FineTuneRun, more: ReadonlyArray<FineTuneEvent>) => {
    const seen = new Set(run.events.map((e) => `${e.at}\u0001${e.message}`))
    const fresh = more.filter((e) => !seen.has(`${e.at}\u0001${e.message}`))
    return [...run.events, ...fresh].sort((a, b) => a.at.localeCompare(b.at)).slice(-maxEvents)
  }

  const remoteFailure = (runId: string) => (error: FineTuningFailed) =>
    new TrainingFailed({ run_id: runId, reason: `fine-tuning API: ${error.reason}` })

  /** The remote job this run created, found by the run id it carries. */
  const remoteJobOf = (runId: string) => api.findByMetadata("podium_run_id", runId)

  /** Stops a remote job that no run follows any more; its service may be down: best effort, logged. */
  const cancelRemote = (runId: string, jobId: string | null) =>
    Effect.gen(function*() {
      const id = jobId ?? Option.getOrUndefined(yield* remoteJobOf(runId))?.id
      if (id !== undefined) yield* api.cancel(id)
    }).pipe(
      Effect.catchCause((cause) =>
        Effect.logWarning("remote fine-tuning job not cancelled", cause).pipe(Effect.annotateLogs({ run_id: runId }))
      )
    )

  /** A remote event as the run shows it: the tuned model's name (where the version lives) is never shown. */
  const eventOf = (tuned: string | null) => (e: RemoteEvent): FineTuneEvent => ({
    at: e.created_at,
    level: e.level,
    message: storableText(tuned === null ? e.message : e.message.split(tuned).join("[the tuned model]"))
  })

  /**
   * One look at the remote job, while the run trains: its status, events and training metrics
   * recorded (never over what later steps wrote); answers whether it has ended.
   */
  const look = Effect.fnUntraced(function*(run: FineTuneRun) {
    const remote = run.remote
    if (remote === null || run.artifact !== null) return false
    const [job, events] = yield* Effect.all([api.job(remote.job_id), api.events(remote.job_id)])
    const training = events.flatMap((e) => e.metrics === null ? [] : [e.metrics]).at(-1)
    const succeeded = job.status === "succeeded" && job.fine_tuned_model !== null
    yield* runs.progress(run.id, {
      remote: { ...remote, status: job.status },
      events: withEvents(run, events.map(eventOf(job.fine_tuned_model))),
      metrics: { trained_tokens: job.trained_tokens, ...(training === undefined ? {} : { training }) },
      ...(succeeded ? { artifact: { kind: "openai" as const, model: job.fine_tuned_model! } } : {}),
      while_training: true
    })
    if (job.status === "failed" || job.status === "cancelled" || (job.status === "succeeded" && !succeeded)) {
      return yield* new TrainingFailed({
        run_id: run.id,
        reason: `the fine-tuning job ${job.status === "succeeded" ? "named no tuned model" : job.status}` +
          (job.error === null ? "" : `: ${job.error}`)
      })
    }
    return succeeded
  })

  return { runOf, event, withEvents, remoteFailure, remoteJobOf, cancelRemote, look }
})
