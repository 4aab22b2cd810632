import { Effect, Layer, Schema } from "effect"
import { Activity, Workflow } from "effect/workflow"
import { orFail, persistent, reasonOf, untilLanded, workflows } from "./Steps.ts"
import { DeploymentQueue, Deployments, FineTuneQueue, FineTuneSteps, NoTrainingData, TrainingFailed } from "@podium/domain/models"
import { FineTuneRunId, ModelVersionId } from "@podium/domain/shared"

/**
 * A fine-tune as a durable workflow, keyed by the run: prepare (examples fixed once) → train (a
 * remote job is created once: after a restart it is found again by the run id it carries) →
 * follow (until the job ends) → evaluate (held-out rows, base and version) → finish (the version,
 * and the deployment gate). After a restart, finished steps replay from storage and the one cut
 * short runs again; each is safe to repeat.
 */
export const FineTuneWorkflow = Workflow.make("FineTune", {
  payload: { run_id: FineTuneRunId },
  idempotencyKey: ({ run_id }) => run_id
})


const Failures = Schema.Union([NoTrainingData, TrainingFailed])

export const layerFineTuneWorkflow = FineTuneWorkflow.toLayer(Effect.fnUntraced(function*({ run_id }) {
  const steps = yield* FineTuneSteps
  const step = (name: string, effect: Effect.Effect<void, NoTrainingData | TrainingFailed>) =>
    Activity.make({ name, error: Failures, execute: persistent(effect) })
  const work = Effect.gen(function*() {
    yield* step("prepare", steps.prepare(run_id))
    yield* step("train", steps.train(run_id))
    yield* step("follow", steps.follow(run_id))
    yield* step("evaluate", steps.evaluate(run_id))
    yield* step("finish", steps.finish(run_id))
  })
  yield* orFail(work, (reason) => steps.fail(run_id, reason), failure)
}))

const failure = reasonOf((error) =>
  error instanceof TrainingFailed ? error.reason : error instanceof NoTrainingData ? error.message : undefined
)

/** Enqueues through the workflow engine: the execution is stored before `enqueue` returns. */
export const layerFineTuneQueue = Layer.effect(
  FineTuneQueue,
  Effect.map(workflows, ({ enqueue }) =>
    FineTuneQueue.of({ enqueue: (run) => enqueue(FineTuneWorkflow, { run_id: run.id }, "FineTuneQueue.enqueue") }))
)

/** A deployment's check as a durable workflow, keyed by the version: it ends active or failed, after restarts too. */
export const DeploymentWorkflow = Workflow.make("Deployment", {
  payload: { version_id: ModelVersionId, requested_at: Schema.String },
  // a version deployed again later is a new execution: the key carries the moment it was asked
  idempotencyKey: ({ requested_at, version_id }) => `${version_id}:${requested_at}`
})

export const layerDeploymentWorkflow = DeploymentWorkflow.toLayer(Effect.fnUntraced(function*({ version_id }) {
  const deployments = yield* Deployments
  yield* Activity.make({ name: "check", execute: untilLanded(deployments.check(version_id)) })
}))

export const layerDeploymentQueue = Layer.effect(
  DeploymentQueue,
  Effect.map(workflows, ({ enqueue }) =>
    DeploymentQueue.of({
      enqueue: (versionId, requestedAt) =>
        enqueue(DeploymentWorkflow, { version_id: versionId, requested_at: requestedAt }, "DeploymentQueue.enqueue")
    }))
)
