import { DateTime, Effect, Option } from "effect"
import { FineTuneRunId, IdGenerator, storeThenEnqueue } from "../shared/index.ts"
import { BaseModels } from "./BaseModels.ts"
import { type FineTuneOptions, FineTuneRun, type FineTuneTrigger } from "./FineTuneRun.ts"
import { FineTuneQueue } from "./FineTuneQueue.ts"
import { FineTuneRepository } from "./FineTuneRepository.ts"
import type { DatasetSize, Model } from "./Model.ts"
import { BaseModelUnavailable, NoTrainingData } from "./ModelErrors.ts"

const defaultDatasetSize: DatasetSize = { mode: "LIMIT", limit: { auto: true, algorithm: "LAST_N" }, held_out: 0.1 }

export interface StartRequest {
  readonly dataset_size?: DatasetSize | undefined
  readonly create_synthetic_data?: boolean | undefined
  readonly hypertuning_enabled?: boolean | undefined
}

/**
 * What a person's start (FineTunes) and a schedule (FineTuneScheduler) share: checks the model can
 * learn, then stores the queued run and enqueues it. Built inside each layer from the ports it needs.
 */
export const makeLaunch = Effect.gen(function*() {
  const runs = yield* FineTuneRepository
  const queue = yield* FineTuneQueue
  const bases = yield* BaseModels
  const ids = yield* IdGenerator
  return Effect.fnUntraced(function*(model: Model, trigger: FineTuneTrigger, request: StartRequest) {
    if (model.leaderboard_ids.length === 0) {
      return yield* new NoTrainingData({
        model_id: model.id,
        message: "Assign the model a leaderboard to learn from (leaderboard_ids), then fine-tune it"
      })
    }
    const chosen = model.selected_base_model_version_id
    const unavailable = (message: string) => new BaseModelUnavailable({ model_id: model.id, message })
    if (chosen === null) {
      return yield* unavailable("Choose a base model first: PATCH the model with selected_base_model_version_id from GET /api/base-models")
    }
    const base = yield* bases.find(model.workspace_id, chosen)
    if (Option.isNone(base)) {
      return yield* unavailable("The model's base model is no longer offered: choose another from GET /api/base-models")
    }
    const options: FineTuneOptions = {
      dataset_size: request.dataset_size ?? defaultDatasetSize,
      create_synthetic_data: request.create_synthetic_data ?? false,
      hypertuning_enabled: request.hypertuning_enabled ?? model.hypertuning_parameters
    }
    const run = new FineTuneRun({
      id: yield* ids.make(FineTuneRunId),
      model_id: model.id,
      workspace_id: model.workspace_id,
      status: "queued",
      trigger,
      trainer: base.value.trainer,
      base_model: base.value,
      options,
      dataset: null,
      remote: null,
      metrics: null,
      events: [],
      artifact: null,
      version_id: null,
      gate: null,
      error: null,
      created_at: yield* DateTime.now,
      started_at: null,
      finished_at: null
    })
    yield* storeThenEnqueue(runs.create(run), queue.enqueue(run), { kind: "fine-tune", id: run.id })
    return run
  })
})
