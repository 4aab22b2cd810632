import { Context, Effect, Layer, Option } from "effect"
import type { Principal } from "../access/index.ts"
import type { IntegrationUnavailable } from "../integrations/index.ts"
import { type FineTuneRunId, type ModelId, type ModelVersionId, NotFound } from "../shared/index.ts"
import type { FineTuneRun } from "./FineTuneRun.ts"
import { makeLaunch, type StartRequest } from "./FineTuneLaunch.ts"
import { makeRemote } from "./FineTuneRemote.ts"
import { BaseModelUnavailable, FineTuneInProgress, NoTrainingData } from "./ModelErrors.ts"
import { FineTuneRepository } from "./FineTuneRepository.ts"
import { Models } from "./Models.ts"
import type { ModelVersion } from "./ModelVersion.ts"

export type { StartRequest } from "./FineTuneLaunch.ts"

type Page = { readonly limit: number; readonly offset: number }

/**
 * Fine-tunes: a model learns from its leaderboards' consolidated rows. This is what the handlers
 * call; a run is a durable job (FineTuneQueue) whose steps are FineTuneSteps', and schedules and
 * continuous learning are FineTuneScheduler's.
 */
export class FineTunes extends Context.Service<FineTunes, {
  readonly start: (
    principal: Principal,
    modelId: ModelId,
    request: StartRequest
  ) => Effect.Effect<FineTuneRun, NotFound | NoTrainingData | BaseModelUnavailable | FineTuneInProgress | IntegrationUnavailable>
  readonly list: (principal: Principal, modelId: ModelId, page: Page) => Effect.Effect<ReadonlyArray<FineTuneRun>, NotFound>
  /** Asks the remote job of the run (the newest run when none is named) how it is doing now. */
  readonly sync: (principal: Principal, modelId: ModelId, runId: FineTuneRunId | undefined) => Effect.Effect<FineTuneRun, NotFound>
  readonly versions: (principal: Principal, modelId: ModelId) => Effect.Effect<ReadonlyArray<ModelVersion>, NotFound>
  /** One run of the model; NotFound when the model has no run of that id. */
  readonly run: (principal: Principal, modelId: ModelId, runId: FineTuneRunId) => Effect.Effect<FineTuneRun, NotFound>
  /** One version of the model; NotFound when the model has no version of that id. */
  readonly version: (principal: Principal, modelId: ModelId, versionId: ModelVersionId) => Effect.Effect<ModelVersion, NotFound>
}>()("@podium/domain/models/FineTunes") {
  static readonly layer = Layer.effect(
    FineTunes,
    Effect.gen(function*() {
      const models = yield* Models
      const runs = yield* FineTuneRepository
      const launch = yield* makeLaunch
      const { look, runOf } = yield* makeRemote

      const start = Effect.fn("FineTunes.start")(function*(principal: Principal, modelId: ModelId, request: StartRequest) {
        return yield* launch(yield* models.visible(principal, modelId), "manual", request)
      })

      const list = Effect.fn("FineTunes.list")(function*(principal: Principal, modelId: ModelId, page: Page) {
        const model = yield* models.visible(principal, modelId)
        return yield* runs.list(model.id, page)
      })

      const versions = Effect.fn("FineTunes.versions")(function*(principal: Principal, modelId: ModelId) {
        const model = yield* models.visible(principal, modelId)
        return yield* runs.versions(model.id)
      })

      const run = Effect.fn("FineTunes.run")(function*(principal: Principal, modelId: ModelId, runId: FineTuneRunId) {
        const model = yield* models.visible(principal, modelId)
        const found = Option.filter(yield* runs.find(runId), (r) => r.model_id === model.id)
        if (Option.isNone(found)) return yield* new NotFound({ resource: "fine-tune run", id: runId })
        return found.value
      })

      const version = Effect.fn("FineTunes.version")(function*(principal: Principal, modelId: ModelId, versionId: ModelVersionId) {
        const model = yield* models.visible(principal, modelId)
        const found = Option.filter(yield* runs.findVersion(versionId), (v) => v.model_id === model.id)
        if (Option.isNone(found)) return yield* new NotFound({ resource: "model version", id: versionId })
        return found.value
      })

      const sync = Effect.fn("FineTunes.sync")(function*(principal: Principal, modelId: ModelId, runId: FineTuneRunId | undefined) {
        const model = yield* models.visible(principal, modelId)
        const found = runId === undefined
          ? Option.fromUndefinedOr((yield* runs.list(model.id, { limit: 1, offset: 0 }))[0])
          : Option.filter(yield* runs.find(runId), (run) => run.model_id === model.id)
        if (Option.isNone(found)) return yield* new NotFound({ resource: "fine-tune run", id: runId ?? "(latest)" })
        const run = found.value
        if (run.status === "running") {
          // what the remote service says now (while it trains); its failures are the run's to handle, not this request's
          yield* look(run).pipe(Effect.ignore)
        }
        return yield* runOf(run.id)
      })

      return FineTunes.of({ start, list, sync, versions, run, version })
    })
  )
}
