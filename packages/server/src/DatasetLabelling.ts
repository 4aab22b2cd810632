import { Cause, Effect, Layer, Schema } from "effect"
import { Activity, Workflow } from "effect/workflow"
import { DatasetLabelQueue, DatasetLabels, LabelJobId } from "@podium/domain/datasets"
import { LeaderboardId } from "@podium/domain/leaderboards"
import { orFail, persistent, workflows } from "./Steps.ts"

/**
 * An auto-labels job as a durable workflow, keyed by the job: each page of rows is an activity, so a
 * restart replays the finished pages from storage and carries on from the last one (a page cut short
 * is redone; rows it labelled are skipped). Then the labels are published as a new version.
 */
export const DatasetLabelsWorkflow = Workflow.make("DatasetLabels", {
  payload: { job_id: LabelJobId, leaderboard_id: LeaderboardId },
  idempotencyKey: ({ job_id }) => job_id
})

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
  // the steps are safe to repeat (a label is saved once per row); the job's error is the cause's first line
  const reason = (cause: Cause.Cause<never>) => Cause.pretty(cause).split("\n")[0] ?? "failed"
  yield* orFail(run, (error) => labels.fail(job.job_id, error), reason, persistent)
}))

/** Enqueues through the workflow engine: the execution is stored before `enqueue` returns. */
export const layerDatasetLabelQueue = Layer.effect(
  DatasetLabelQueue,
  Effect.map(workflows, ({ enqueue }) =>
    DatasetLabelQueue.of({
      enqueue: (job) => enqueue(DatasetLabelsWorkflow, { job_id: job.id, leaderboard_id: job.leaderboard_id }, "DatasetLabelQueue.enqueue")
    }))
)
