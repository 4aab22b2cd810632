import { Effect, Layer, Schema } from "effect"
import { Activity, Workflow } from "effect/workflow"
import { orFail, persistent, reasonOf, workflows } from "./Steps.ts"
import { LeaderboardId } from "@podium/domain/leaderboards"
import { RunId } from "@podium/domain/shared"
import {
  DatasetImprovements,
  DatasetMissing,
  DatasetUnavailable,
  ImprovementId,
  ImprovementQueue,
  RunQueue,
  runChunkRows,
  RunSteps
} from "@podium/domain/runs"

/**
 * A run as a durable workflow, keyed by the run. `prepare` fixes its rows; then every candidate
 * works through them in chunks (one activity per candidate and chunk, the candidates side by side);
 * then `finish` ranks. After a restart the finished activities replay from storage and a chunk cut
 * short is asked again for its unanswered rows only (a cell is written once).
 */
export const RunWorkflow = Workflow.make("Run", {
  payload: { run_id: RunId },
  idempotencyKey: ({ run_id }) => run_id
})


const Prepared = Schema.Struct({ rows: Schema.Int, model_ids: Schema.Array(Schema.String) })

export const layerRunWorkflow = RunWorkflow.toLayer(Effect.fnUntraced(function*({ run_id }) {
  const runs = yield* RunSteps
  const improvements = yield* DatasetImprovements
  const work = Effect.gen(function*() {
    const { improve_dataset, leaderboard_id } = yield* Activity.make({
      name: "read",
      success: Schema.Struct({ improve_dataset: Schema.Boolean, leaderboard_id: LeaderboardId }),
      execute: persistent(runs.describe(run_id))
    })
    if (improve_dataset) {
      yield* Activity.make({ name: "improve", execute: persistent(improvements.improveNow(leaderboard_id)) })
    }
    const { model_ids, rows } = yield* Activity.make({
      name: "prepare",
      success: Prepared,
      error: Schema.Union([DatasetUnavailable, DatasetMissing]),
      execute: persistent(runs.prepare(run_id))
    })
    const chunks = Array.from({ length: Math.ceil(rows / runChunkRows) }, (_, i) => i * runChunkRows)
    // the candidates side by side; each works on two chunks at a time, its calls in flight bounded
    // across both (RunSteps.ask), so the next chunk fills in while the last calls of one are out
    yield* Effect.forEach(model_ids, (candidateId) =>
      Effect.forEach(chunks, (from) =>
        Activity.make({
          // named by what it covers, so a deploy that changes the chunk size cannot mistake one for another
          name: `ask-${candidateId}-${from}-${runChunkRows}`,
          execute: persistent(runs.ask(run_id, candidateId, from, from + runChunkRows))
        }), { concurrency: 2, discard: true }), { concurrency: "unbounded", discard: true })
    yield* Activity.make({ name: "finish", execute: persistent(runs.finish(run_id)) })
  })
  // a run left `running` would hold its leaderboard: its fail step is tried until it lands
  yield* orFail(work, (reason) => runs.fail(run_id, reason), failure)
}))

const failure = reasonOf((error) =>
  error instanceof DatasetUnavailable
    ? `dataset: ${error.reason}`
    : error instanceof DatasetMissing
    ? error.message
    : undefined
)

/** Enqueues through the workflow engine: the execution is stored before `enqueue` returns. */
export const layerRunQueue = Layer.effect(
  RunQueue,
  Effect.map(workflows, ({ enqueue }) =>
    RunQueue.of({ enqueue: (run) => enqueue(RunWorkflow, { run_id: run.id }, "RunQueue.enqueue") }))
)

/** An improve-dataset job as a durable workflow, keyed by the job: prepare, a page at a time, publish. */
export const ImprovementWorkflow = Workflow.make("DatasetImprovement", {
  payload: { job_id: ImprovementId },
  idempotencyKey: ({ job_id }) => job_id
})

export const layerImprovementWorkflow = ImprovementWorkflow.toLayer(Effect.fnUntraced(function*({ job_id }) {
  const improvements = yield* DatasetImprovements
  const work = Effect.gen(function*() {
    yield* Activity.make({
      name: "prepare",
      error: Schema.Union([DatasetUnavailable, DatasetMissing]),
      execute: persistent(improvements.prepare(job_id))
    })
    let after: number | null = -1
    for (let page = 1; after !== null; page++) {
      after = yield* Activity.make({
        name: `page-${page}`,
        success: Schema.NullOr(Schema.Int),
        execute: persistent(improvements.improvePage(job_id, after))
      })
    }
    yield* Activity.make({ name: "publish", execute: persistent(improvements.publish(job_id)) })
  })
  yield* orFail(work, (reason) => improvements.fail(job_id, reason), failure, persistent)
}))

/** Enqueues through the workflow engine: the execution is stored before `enqueue` returns. */
export const layerImprovementQueue = Layer.effect(
  ImprovementQueue,
  Effect.map(workflows, ({ enqueue }) =>
    ImprovementQueue.of({ enqueue: (job) => enqueue(ImprovementWorkflow, { job_id: job.id }, "ImprovementQueue.enqueue") }))
)
