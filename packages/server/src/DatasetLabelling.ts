import { Cause, Effect, Layer, Schedule, Schema } from "effect"
import { Activity, Workflow, WorkflowEngine } from "effect/workflow"
import { DatasetLabelQueue, DatasetLabels } from "@podium/domain/datasets"

/**
 * An auto-labels job as a durable workflow, keyed by the job: each page of rows is an activity, so a
 * restart replays the finished pages from storage and carries on from the last one (a page cut short
 * is redone; rows it labelled are skipped). Then the labels are published as a new version.
 */
export const DatasetLabelsWorkflow = Workflow.make("DatasetLabels", {
  payload: { job_id: Schema.String, leaderboard_id: Schema.String },
  idempotencyKey: ({ job_id }) => job_id
})

/**
 * A step that died (the database went away, say) is tried again, eight times over about four
 * minutes, before the job gives up: one dropped connection must not fail a job that has paid for
 * its labels. The steps are safe to repeat (a label is saved once per row).
 */
const persistent = <A>(step: Effect.Effect<A>): Effect.Effect<A> =>
  step.pipe(
    Effect.catchCause((cause) => Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.fail(cause)),
    Effect.retry({ schedule: Schedule.exponential("1 second"), times: 8 }),
    Effect.catch((cause) => Effect.failCause(cause))
  )

export const layerDatasetLabelsWorkflow = DatasetLabelsWorkflow.toLayer(Effect.fnUntraced(function*(job) {
  const labels = yield* DatasetLabels
  const run = Effect.gen(function*() {
    let after: string | null = null
    for (let page = 1;; page++) {
      after = yield* Activity.make({
        name: `page-${page}`,
        success: Schema.NullOr(Schema.String),
        execute: persistent(labels.labelPage(job.job_id, after))
      })
      if (after === null) break
    }
    yield* Activity.make({ name: "publish", execute: persistent(labels.publish(job.job_id)) })
  })
  yield* run.pipe(
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : Activity.make({
          name: "fail",
          execute: persistent(labels.fail(job.job_id, Cause.pretty(cause).split("\n")[0] ?? "failed"))
        })
    )
  )
}))

/** Enqueues through the workflow engine: the execution is stored before `enqueue` returns. */
export const layerDatasetLabelQueue = Layer.effect(
  DatasetLabelQueue,
  Effect.gen(function*() {
    const engine = yield* WorkflowEngine.WorkflowEngine
    return DatasetLabelQueue.of({
      enqueue: (job) =>
        DatasetLabelsWorkflow.execute({ job_id: job.id, leaderboard_id: job.leaderboard_id }, { discard: true }).pipe(
          Effect.asVoid,
          Effect.provideService(WorkflowEngine.WorkflowEngine, engine),
          Effect.withSpan("DatasetLabelQueue.enqueue")
        )
    })
  })
)
