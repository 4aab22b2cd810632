import { Cause, Effect, Layer, Schedule, Schema } from "effect"
import { Activity, Workflow, WorkflowEngine } from "effect/workflow"
import { DatasetMissing, DatasetUnavailable, RunQueue, runChunkRows, Runs } from "@podium/domain/runs"

/**
 * A run as a durable workflow, keyed by the run. `prepare` fixes its rows; then every candidate
 * works through them in chunks (one activity per candidate and chunk, the candidates side by side);
 * then `finish` ranks. After a restart the finished activities replay from storage and a chunk cut
 * short is asked again for its unanswered rows only (a cell is written once).
 */
export const RunWorkflow = Workflow.make("Run", {
  payload: { run_id: Schema.String },
  idempotencyKey: ({ run_id }) => run_id
})

/**
 * A step that died (the database went away, say) is tried again, eight times over about four
 * minutes, before the run fails: a dropped connection must not fail a run that has paid for its
 * answers. Every step is safe to repeat.
 */
const persistent = <A, E>(step: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  step.pipe(
    Effect.sandbox,
    Effect.retry({
      schedule: Schedule.exponential("1 second"),
      times: 8,
      while: (cause) => Cause.hasDies(cause) && !Cause.hasFails(cause) && !Cause.hasInterrupts(cause)
    }),
    Effect.catch(Effect.failCause)
  )

const Prepared = Schema.Struct({ rows: Schema.Int, model_ids: Schema.Array(Schema.String) })

export const layerRunWorkflow = RunWorkflow.toLayer(Effect.fnUntraced(function*({ run_id }) {
  const runs = yield* Runs
  const work = Effect.gen(function*() {
    const { model_ids, rows } = yield* Activity.make({
      name: "prepare",
      success: Prepared,
      error: Schema.Union([DatasetUnavailable, DatasetMissing]),
      execute: persistent(runs.prepare(run_id))
    })
    yield* Effect.forEach(model_ids, (candidateId, c) =>
      Effect.gen(function*() {
        for (let from = 0, chunk = 0; from < rows; from += runChunkRows, chunk++) {
          yield* Activity.make({
            name: `ask-${c}-${chunk}`,
            execute: persistent(runs.ask(run_id, candidateId, from, from + runChunkRows))
          })
        }
      }), { concurrency: "unbounded", discard: true })
    yield* Activity.make({ name: "finish", execute: persistent(runs.finish(run_id)) })
  })
  yield* work.pipe(
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause as Cause.Cause<never>)
        : Activity.make({
          name: "fail",
          execute: persistent(runs.fail(run_id, reasonOf(cause)))
        })
    )
  )
}))

const reasonOf = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause)
  if (error instanceof DatasetUnavailable) return `dataset: ${error.reason}`
  if (error instanceof DatasetMissing) return error.message
  return `internal: ${error instanceof Error ? error.message : String(error)}`.split("\n")[0]!
}

/** Enqueues through the workflow engine: the execution is stored before `enqueue` returns. */
export const layerRunQueue = Layer.effect(
  RunQueue,
  Effect.gen(function*() {
    const engine = yield* WorkflowEngine.WorkflowEngine
    return RunQueue.of({
      enqueue: (run) =>
        RunWorkflow.execute({ run_id: run.id }, { discard: true }).pipe(
          Effect.asVoid,
          Effect.provideService(WorkflowEngine.WorkflowEngine, engine),
          Effect.withSpan("RunQueue.enqueue")
        )
    })
  })
)
