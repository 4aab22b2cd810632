import { type Context, DateTime, Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { describe, expect, it } from "vitest"
import { DatasetRepositoryMemory } from "../datasets/memory.ts"
import { HubDatasets, IntegrationRepository } from "../integrations/index.ts"
import { Leaderboards } from "../leaderboards/index.ts"
import { LeaderboardRepositoryMemory, ServingHistoryMemory } from "../leaderboards/memory.ts"
import { IdGeneratorInOrder, ModelDirectoryEmpty, SecretCipherSealing, workspaceOwner } from "../testing/index.ts"
import { type BaseModel, baseModelId } from "./BaseModel.ts"
import { BaseModels } from "./BaseModels.ts"
import type { FineTuneRun } from "./FineTuneRun.ts"
import { FineTuneScheduler } from "./FineTuneScheduler.ts"
import { ModelId, newModel } from "./Model.ts"
import { FineTuneQueue } from "./FineTuneQueue.ts"
import { FineTuneRepository } from "./FineTuneRepository.ts"
import { ModelRepository } from "./ModelRepository.ts"
import { FineTuneRepositoryMemory, ModelRepositoryMemory } from "./ModelRepositoryMemory.ts"
import { Models } from "./Models.ts"

// The fine-tune scheduler under a test clock: the use cases over the memory repositories. Nothing
// here trains (the queue records what it is given): a run's steps (FineTuneSteps) are not wired.

const base: BaseModel = {
  id: baseModelId("openai", "base-model"),
  name: "base-model",
  trainer: "openai",
  provider: "fine_tuning_api",
  model_name: "base-model"
}
const enqueued: Array<FineTuneRun> = []
/** A port nothing here may use: any call of it dies. */
const absent = <I, S>(tag: Context.Service<I, S>) =>
  Layer.succeed(tag, new Proxy({}, { get: (_, name) => () => Effect.die(`${String(name)} is not used here`) }) as S)

const adapters = Layer.mergeAll(
  LeaderboardRepositoryMemory.layer,
  ServingHistoryMemory.layer,
  DatasetRepositoryMemory.layer,
  FineTuneRepositoryMemory.layer,
  IdGeneratorInOrder.layer,
  SecretCipherSealing.layer,
  ModelDirectoryEmpty.layer,
  Layer.succeed(BaseModels, BaseModels.of({
    list: () => Effect.succeed([base]),
    find: (_, id) => Effect.succeed(id === base.id ? Option.some(base) : Option.none())
  })),
  Layer.succeed(FineTuneQueue, FineTuneQueue.of({ enqueue: (run) => Effect.sync(() => void enqueued.push(run)) })),
  Layer.succeed(IntegrationRepository, IntegrationRepository.of({
  save: () => Effect.void,
  find: () => Effect.succeedNone,
  list: () => Effect.succeed([]),
  remove: () => Effect.succeed(false)
})),
  absent(HubDatasets)
)
const repositories = ModelRepositoryMemory.layer.pipe(Layer.provideMerge(adapters))
const layer = FineTuneScheduler.layer.pipe(
  Layer.provideMerge(Models.layer),
  Layer.provideMerge(Leaderboards.layer),
  Layer.provideMerge(repositories),
  Layer.provideMerge(TestClock.layer())
)

const owner = workspaceOwner(1)
const iso = DateTime.formatIso

describe("scheduled fine-tunes", () => {
  it("start when due by the clock, once per occurrence, and skip the occurrences missed", () =>
    Effect.runPromise(Effect.provide(
      Effect.gen(function*() {
        const scheduler = yield* FineTuneScheduler
        const models = yield* Models
        const stored = yield* ModelRepository
        const runs = yield* FineTuneRepository
        yield* TestClock.setTime(Date.parse("2026-11-23T09:00:00.000Z"))
        const leaderboard = yield* (yield* Leaderboards).create(owner, { name: "support", dataset_type: "PUSH" })
        const now = yield* DateTime.now
        // stored as it is (the assignment rule is the use case's, tested elsewhere)
        const model = newModel({
          id: ModelId.make("00000000-0000-4000-8000-0000000000aa"),
          workspace_id: leaderboard.workspace_id,
          name: "scheduled",
          selected_base_model_version_id: base.id,
          leaderboard_ids: [leaderboard.id],
          created_at: now
        })
        yield* stored.insert(model)
        const scheduled = yield* models.update(owner, model.id, {
          fine_tune_schedule: { run: { type: "DAILY" }, dataset: { limit: { algorithm: "WEIGHTED_SHUFFLE", auto: false, rows: 50 } } }
        })
        expect(iso(scheduled.next_fine_tune_at!)).toBe("2026-11-24T09:00:00.000Z")

        expect(yield* scheduler.runSchedules).toBe(0)
        yield* TestClock.adjust("23 hours")
        expect(yield* scheduler.runSchedules).toBe(0)
        yield* TestClock.adjust("1 hour")
        expect(yield* scheduler.runSchedules).toBe(1)
        expect(yield* scheduler.runSchedules).toBe(0)
        expect(enqueued).toHaveLength(1)
        expect(enqueued[0]).toMatchObject({
          model_id: model.id,
          status: "queued",
          trigger: "schedule",
          trainer: "openai",
          options: { dataset_size: { limit: { algorithm: "WEIGHTED_SHUFFLE", rows: 50 } } }
        })
        expect(iso((yield* models.get(owner, model.id)).next_fine_tune_at!)).toBe("2026-11-25T09:00:00.000Z")
        yield* runs.end(enqueued[0]!.id, { status: "failed", version: null, gate: null, error: "test" }, yield* DateTime.now)

        // three days on: one fine-tune, not three, and the next is the first occurrence still ahead
        yield* TestClock.adjust("3 days")
        expect(yield* scheduler.runSchedules).toBe(1)
        expect(enqueued).toHaveLength(2)
        expect(iso((yield* models.get(owner, model.id)).next_fine_tune_at!)).toBe("2026-11-28T09:00:00.000Z")

        // while one runs, a due occurrence passes without a second
        yield* TestClock.adjust("1 day")
        expect(yield* scheduler.runSchedules).toBe(0)
        expect(enqueued).toHaveLength(2)
        expect(iso((yield* models.get(owner, model.id)).next_fine_tune_at!)).toBe("2026-11-29T09:00:00.000Z")
      }),
      layer
    )))
})
