import { Context, DateTime, Duration, Effect, Layer, Option, Result, Schedule } from "effect"
import { administratorOf, type Forbidden, type Principal } from "../access/index.ts"
import { ChatProvider, type ChatTarget, ChatTargets } from "../inference/index.ts"
import { IdGenerator, type InvalidInput, type ModelId, type ModelVersionId, NotFound, type RequestMessage, type WorkspaceId } from "../shared/index.ts"
import { deployable, type DeployOptions, deploymentOf } from "./Deployment.ts"
import {
  DeploymentEntryId,
  DeploymentHistory,
  DeploymentHistoryEntry,
  type DeploymentHistoryPage,
  deployKindOf,
  deploymentActorOf
} from "./DeploymentHistory.ts"
import { DeploymentQueue } from "./DeploymentQueue.ts"
import { DeploymentRepository } from "./DeploymentRepository.ts"
import { FineTuningApi } from "./FineTuningApi.ts"
import { VersionDeployed, VersionNotDeployed } from "./ModelErrors.ts"
import { FineTuneRepository } from "./FineTuneRepository.ts"
import { Models } from "./Models.ts"
import { type Artifact, type ModelVersion, withDemonstrations } from "./ModelVersion.ts"

/** Where a version is asked: the provider's tuned model, or the router's base model with the demonstrations in front. */
export const versionTarget = Effect.fnUntraced(function*(artifact: Artifact, workspaceId: WorkspaceId) {
  const api = yield* FineTuningApi
  const targets = yield* ChatTargets
  if (artifact.kind === "openai") return { target: api.chatTarget(artifact.model), shape: <A>(m: A) => m }
  const target: ChatTarget = yield* targets.judge("router", artifact.base_model, workspaceId)
  return {
    target,
    shape: (messages: ReadonlyArray<RequestMessage>): ReadonlyArray<RequestMessage> =>
      withDemonstrations(artifact.demonstrations, messages)
  }
})

/**
 * Deployments: an owner or admin deploys a version (`deploying`), a durable job checks that it
 * answers (the provider's tuned model, or the router's base model for a prompt program) and makes
 * it `active`, stopping the model's version active before; or `failed`, with the reason. An owner or
 * admin stops the active version: it becomes `stopped` and the model serves nothing until the next
 * deployment. Each deploy (a `rollback` when the version is older than the one active) and each
 * stop is appended to the model's DeploymentHistory with who asked.
 */
export class Deployments extends Context.Service<Deployments, {
  readonly deploy: (
    principal: Principal,
    modelId: ModelId,
    versionId: ModelVersionId,
    options: DeployOptions
  ) => Effect.Effect<ModelVersion, NotFound | Forbidden | InvalidInput | VersionDeployed>
  /** Stops the model's active version (VersionNotDeployed when it is not active). */
  readonly stop: (
    principal: Principal,
    modelId: ModelId,
    versionId: ModelVersionId
  ) => Effect.Effect<ModelVersion, NotFound | Forbidden | VersionNotDeployed>
  /** The model's deployment history, newest first, for anyone who sees the model. */
  readonly history: (
    principal: Principal,
    modelId: ModelId,
    page: { readonly limit: number; readonly cursor?: DeploymentEntryId | undefined }
  ) => Effect.Effect<DeploymentHistoryPage, NotFound>
  /**
   * Enqueues again the checks of versions deploying for over a minute: a crash between marking a
   * version deploying and enqueueing its check leaves one (enqueueing is idempotent). Answers how many.
   */
  readonly requeue: Effect.Effect<number>
  /** The durable step: one check of a deploying version, then active or failed. Safe to repeat. */
  readonly check: (versionId: ModelVersionId) => Effect.Effect<void>
}>()("@podium/domain/models/Deployments") {
  static readonly layer = Layer.effect(
    Deployments,
    Effect.gen(function*() {
      const models = yield* Models
      const fineTunes = yield* FineTuneRepository
      const deployments = yield* DeploymentRepository
      const queue = yield* DeploymentQueue
      const history = yield* DeploymentHistory
      const ids = yield* IdGenerator
      const provider = yield* ChatProvider
      const context = yield* Effect.context<FineTuningApi | ChatTargets>()

      const versionOf = (modelId: ModelId, versionId: ModelVersionId) =>
        Effect.map(fineTunes.findVersion(versionId), Option.filter((v) => v.model_id === modelId))

      /** The version's deployment status now (after a store refused a change), or "gone". */
      const statusNow = (modelId: ModelId, versionId: ModelVersionId) =>
        Effect.map(versionOf(modelId, versionId), Option.match({ onNone: () => "gone", onSome: (v) => v.deployment_status }))

      /** Appends a change of what `model` serves to its deployment history. */
      const record = (
        model: { readonly id: ModelId; readonly workspace_id: WorkspaceId },
        change: Pick<DeploymentHistoryEntry, "at" | "kind" | "from_version_id" | "to_version_id" | "actor" | "evidence">
      ) =>
        Effect.flatMap(ids.make(DeploymentEntryId), (id) =>
          history.append(new DeploymentHistoryEntry({ id, workspace_id: model.workspace_id, model_id: model.id, reason: null, ...change })))

      const deploy = Effect.fn("Deployments.deploy")(function*(
        principal: Principal,
        modelId: ModelId,
        versionId: ModelVersionId,
        options: DeployOptions
      ) {
        const model = yield* models.visible(principal, modelId)
        yield* administratorOf(principal, model.workspace_id)
        const deployment = yield* Effect.fromResult(deploymentOf(options))
        const version = yield* versionOf(model.id, versionId)
        if (Option.isNone(version)) return yield* new NotFound({ resource: "model version", id: versionId })
        if (!deployable(version.value.deployment_status)) {
          return yield* new VersionDeployed({ version_id: versionId, status: version.value.deployment_status })
        }
        const active = yield* fineTunes.activeVersion(model.id)
        const now = yield* DateTime.now
        // `now` is stored as the version's deployed_at: the check's key, so a requeue finds the same execution;
        // the store checks `deployable` again, under the row's lock, against a deploy racing this one
        if (!(yield* deployments.start(model.id, versionId, deployment, now))) {
          return yield* new VersionDeployed({ version_id: versionId, status: yield* statusNow(model.id, versionId) })
        }
        // recorded when asked (the actor is the asker's), whether or not the check then makes it active
        yield* record(model, {
          at: now,
          kind: deployKindOf(version.value, Option.getOrNull(active)),
          from_version_id: Option.match(active, { onNone: () => null, onSome: (v) => v.id }),
          to_version_id: versionId,
          actor: deploymentActorOf(principal),
          evidence: { deployment }
        })
        yield* queue.enqueue(versionId, DateTime.formatIso(now))
        return Option.getOrThrow(yield* versionOf(model.id, versionId))
      })

      const stop = Effect.fn("Deployments.stop")(function*(principal: Principal, modelId: ModelId, versionId: ModelVersionId) {
        const model = yield* models.visible(principal, modelId)
        yield* administratorOf(principal, model.workspace_id)
        const version = yield* versionOf(model.id, versionId)
        if (Option.isNone(version)) return yield* new NotFound({ resource: "model version", id: versionId })
        // the store stops it only if it is active still, against a deployment or stop racing this one
        if (!(yield* deployments.stop(model.id, versionId))) {
          return yield* new VersionNotDeployed({ version_id: versionId, status: yield* statusNow(model.id, versionId) })
        }
        yield* record(model, {
          at: yield* DateTime.now,
          kind: "stop",
          from_version_id: versionId,
          to_version_id: null,
          actor: deploymentActorOf(principal),
          evidence: null
        })
        return Option.getOrThrow(yield* versionOf(model.id, versionId))
      })

      const listHistory = Effect.fn("Deployments.history")(function*(
        principal: Principal,
        modelId: ModelId,
        page: { readonly limit: number; readonly cursor?: DeploymentEntryId | undefined }
      ) {
        const model = yield* models.visible(principal, modelId)
        return yield* history.list(model.id, page)
      })

      const check = Effect.fn("Deployments.check")(function*(versionId: ModelVersionId) {
        const found = yield* fineTunes.findVersion(versionId)
        if (Option.isNone(found) || found.value.deployment_status !== "deploying") return
        const version = found.value
        // a version's run is never deleted before it (the foreign key cascades from the run)
        const run = yield* Effect.flatMap(fineTunes.find(version.fine_tune_run_id), Option.match({
          onNone: () => Effect.die(new Error(`the fine-tune run of version ${versionId} is gone`)),
          onSome: Effect.succeed
        }))
        const { shape, target } = yield* versionTarget(version.artifact, run.workspace_id).pipe(Effect.provide(context))
        const answered = yield* provider.complete(target, { messages: shape([{ role: "user", content: "ping" }]), max_tokens: 1 }).pipe(
          Effect.retry({
            schedule: Schedule.exponential(Duration.millis(500)).pipe(Schedule.jittered),
            times: 3,
            while: (e) => e.upstream_status === null || e.upstream_status === 429 || e.upstream_status >= 500
          }),
          Effect.result
        )
        const now = yield* DateTime.now
        yield* deployments.finish(
          versionId,
          Result.isSuccess(answered)
            ? { status: "active" }
            : { status: "failed", error: `the version did not answer: ${answered.failure.reason}` },
          now
        )
      })

      const requeue = Effect.gen(function*() {
        const stale = yield* deployments.deployingBefore(DateTime.subtract(yield* DateTime.now, { minutes: 1 }))
        yield* Effect.forEach(stale, (v) => queue.enqueue(v.id, DateTime.formatIso(v.requested_at)), { discard: true })
        return stale.length
      }).pipe(Effect.withSpan("Deployments.requeue"))

      return Deployments.of({ deploy, stop, history: listHistory, check, requeue })
    })
  )
}
