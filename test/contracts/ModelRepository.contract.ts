import { assert, describe, layer } from "@effect/vitest"
import type { WorkspaceRepository } from "@podium/domain/access"
import { Leaderboard, LeaderboardId, LeaderboardRepository, type LeaderboardStatus } from "@podium/domain/leaderboards"
import {
  type FineTuneEnd,
  FineTuneInProgress,
  FineTuneRepository,
  FineTuneRun,
  Model,
  newModel,
  ModelId,
  ModelRepository,
  ModelVersion,
  runningRejection,
  type TrainingDataset,
  type TrainingExample
} from "@podium/domain/models"
import { Run, RunRepository } from "@podium/domain/runs"
import { FineTuneRunId, ModelVersionId, RunId, type WorkspaceId } from "@podium/domain/shared"
import { DateTime, Deferred, Effect, Exit, Fiber, type Layer, Option, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { aLeaderboard } from "./LeaderboardRepository.contract.ts"
import { aUser } from "./WorkspaceRepository.contract.ts"

// milliseconds included: a schedule is claimed by comparing instants exactly
const t0 = DateTime.makeUnsafe("2026-11-22T10:00:00.123Z")
const at = (minutes: number) => DateTime.add(t0, { minutes })
const uuid = () => crypto.randomUUID() as string
const page = { limit: 100, offset: 0 }

/** The fields alone, to compare as plain data. */
const plain = <A extends object>(value: A) => ({ ...value })
const modelView = plain<Model>
const runView = plain<FineTuneRun>
const versionView = plain<ModelVersion>

const aWorkspace = Effect.map(aUser(), ({ workspaceId }) => workspaceId)

const aBoard = (workspaceId: WorkspaceId, status: LeaderboardStatus = "active") =>
  Effect.gen(function*() {
    const leaderboard = new Leaderboard({ ...aLeaderboard(workspaceId), status })
    yield* (yield* LeaderboardRepository).insert(leaderboard)
    return leaderboard
  })

const aModel = (workspaceId: WorkspaceId, fields: Partial<Model> = {}) =>
  new Model({
    ...newModel({
      id: ModelId.make(uuid()),
      workspace_id: workspaceId,
      name: "support-bot",
      description: "answers support questions",
      selected_base_model_version_id: "openai:gpt-4o-mini",
      created_at: t0
    }),
    ...fields
  })

const baseModel = {
  id: "openai:gpt-4o-mini",
  name: "GPT-4o mini",
  trainer: "openai",
  provider: "fine_tuning_api",
  model_name: "gpt-4o-mini"
} as const

const aRun = (model: Model, fields: Partial<FineTuneRun> = {}) =>
  new FineTuneRun({
    id: FineTuneRunId.make(uuid()),
    model_id: model.id,
    workspace_id: model.workspace_id,
    status: "queued",
    trigger: "manual",
    trainer: "openai",
    base_model: baseModel,
    options: { dataset_size: { mode: "ALL" }, create_synthetic_data: false, hypertuning_enabled: false },
    dataset: null,
    remote: null,
    metrics: null,
    events: [],
    artifact: null,
    version_id: null,
    gate: null,
    error: null,
    created_at: t0,
    started_at: null,
    finished_at: null,
    ...fields
  })

const sourceBoard = LeaderboardId.make(uuid())
const aDataset = (rows: number): TrainingDataset => ({
  mode: "ALL",
  algorithm: "LAST_N",
  limit: null,
  seed: "seed-1",
  held_out: 0.25,
  available_rows: rows,
  synthetic_rows: 0,
  training_rows: rows,
  held_out_rows: 0,
  sources: [{ leaderboard_id: sourceBoard, dataset_type: "PUSH", version: 2, url: null, rows }]
})

/** Every fourth example is held out. */
const examplesOf = (count: number, leaderboard_id = LeaderboardId.make(uuid())): Array<TrainingExample> =>
  Array.from({ length: count }, (_, index) => ({
    index,
    split: index % 4 === 3 ? "held_out" : "training",
    leaderboard_id,
    input: `q${index}`,
    reference: `a${index}`,
    messages: [{ role: "system", content: "Be brief." }, { role: "user", content: `q${index}` }]
  }))

const aVersion = (run: FineTuneRun, fields: Partial<ModelVersion> = {}) =>
  new ModelVersion({
    id: ModelVersionId.make(uuid()),
    model_id: run.model_id,
    fine_tune_run_id: run.id,
    trainer: run.trainer,
    base_model: run.base_model,
    metrics: { train_loss: 0.25 },
    artifact: { kind: "openai", model: `ft:gpt-4o-mini:${run.id}` },
    deployment_status: "none",
    deployment: null,
    deployment_error: null,
    deployed_at: null,
    created_at: at(10),
    completed_at: at(10),
    ...fields
  })

const succeededWith = (version: ModelVersion | null): FineTuneEnd => ({ status: "succeeded", version, gate: null, error: null })
const cancelled: FineTuneEnd = { status: "cancelled", version: null, gate: null, error: null }

const foundModel = (id: ModelId) =>
  Effect.flatMap(ModelRepository, (models) =>
    Effect.map(models.find(id), (model) => {
      assert.isTrue(Option.isSome(model), `model ${id} was expected`)
      return modelView(Option.getOrThrow(model))
    }))

const foundRun = (id: FineTuneRunId) =>
  Effect.flatMap(FineTuneRepository, (fineTunes) =>
    Effect.map(fineTunes.find(id), (run) => {
      assert.isTrue(Option.isSome(run), `fine-tune ${id} was expected`)
      return runView(Option.getOrThrow(run))
    }))

const idsOf = <Id extends string>(items: ReadonlyArray<{ readonly id: Id }>) => items.map((item) => item.id)

/** A model with a queued fine-tune, in a workspace of its own. */
const aModelWithRun = Effect.gen(function*() {
  const model = aModel(yield* aWorkspace)
  yield* (yield* ModelRepository).insert(model)
  const run = aRun(model)
  yield* (yield* FineTuneRepository).create(run)
  return { model, run }
})

/** A model whose fine-tune has succeeded, making `version`. */
const aVersionMade = (fields: Partial<ModelVersion> = {}) =>
  Effect.gen(function*() {
    const fineTunes = yield* FineTuneRepository
    const { model, run } = yield* aModelWithRun
    const version = aVersion(run, fields)
    assert.isTrue(yield* fineTunes.end(run.id, succeededWith(version), at(10)))
    return { model, run, version }
  })

type Ports = ModelRepository | FineTuneRepository | LeaderboardRepository | WorkspaceRepository

/**
 * The behaviour the use cases rely on, declared once and run against every adapter of
 * `ModelRepository` and `FineTuneRepository` (STYLE.md 19): `makeLayer` builds a fresh one.
 */
export const modelRepositoryContract = (name: string, makeLayer: () => Layer.Layer<Ports, unknown>) =>
  describe(`ModelRepository and FineTuneRepository contract: ${name}`, () => {
    layer(makeLayer(), { timeout: 60_000 })((it) => {
      it.effect("a model is found as given, with its leaderboards in the order given; unknown ones are not found", () =>
        Effect.gen(function*() {
          const models = yield* ModelRepository
          const workspace = yield* aWorkspace
          const boards = [yield* aBoard(workspace), yield* aBoard(workspace), yield* aBoard(workspace)]
          const order = [boards[2]!.id, boards[0]!.id, boards[1]!.id]
          const model = aModel(workspace, {
            model_name: "support-bot-v2",
            leaderboard_ids: order,
            fine_tune_schedule: { run: { type: "WEEKLY" }, dataset: { mode: "LIMIT", limit: { rows: 500 }, held_out: 0.1 } },
            next_fine_tune_at: at(60 * 24 * 7),
            auto_update_model: true,
            hypertuning_parameters: true
          })
          yield* models.insert(model)
          assert.deepStrictEqual(yield* foundModel(model.id), modelView(model))
          assert.isTrue(Option.isNone(yield* models.find(ModelId.make(uuid()))))
          // the same id again is a broken rule of the caller's
          assert.isTrue(Exit.hasDies(yield* Effect.exit(models.insert(model))))
        }))

      it.effect("a workspace's models are listed oldest first, paged, without deleted ones or other workspaces'", () =>
        Effect.gen(function*() {
          const models = yield* ModelRepository
          const workspace = yield* aWorkspace
          const [low, high] = [ModelId.make(uuid()), ModelId.make(uuid())].sort()
          const second = aModel(workspace, { id: high!, created_at: at(1) })
          const first = aModel(workspace, { id: low!, created_at: at(1) })
          const oldest = aModel(workspace, { created_at: t0 })
          const newest = aModel(workspace, { created_at: at(5) })
          const gone = aModel(workspace, { created_at: at(2) })
          for (const model of [second, newest, oldest, gone, first]) yield* models.insert(model)
          yield* models.insert(aModel(yield* aWorkspace))
          assert.isTrue(yield* models.softDelete(gone.id, at(6)))
          assert.isFalse(yield* models.softDelete(gone.id, at(7)))
          assert.isFalse(yield* models.softDelete(ModelId.make(uuid()), at(7)))
          assert.isTrue(Option.isNone(yield* models.find(gone.id)))

          const listed = (limit: number, offset: number) => Effect.map(models.list(workspace, { limit, offset }), idsOf)
          assert.deepStrictEqual(yield* listed(10, 0), [oldest.id, first.id, second.id, newest.id])
          assert.deepStrictEqual(yield* listed(2, 1), [first.id, second.id])
          assert.deepStrictEqual(yield* listed(10, 4), [])
          // a deleted model is not updated either
          assert.isFalse(yield* models.update(new Model({ ...gone, name: "back" })))
        }))

      it.effect("update writes the fields; the assignment is replaced only when it changed, checking only the added ones", () =>
        Effect.gen(function*() {
          const models = yield* ModelRepository
          const leaderboards = yield* LeaderboardRepository
          const workspace = yield* aWorkspace
          const [a, b, c] = [yield* aBoard(workspace), yield* aBoard(workspace), yield* aBoard(workspace)]
          const model = aModel(workspace, { leaderboard_ids: [a.id, b.id] })
          yield* models.insert(model)
          // `a` starts running after it was assigned: it stays assigned
          assert.isTrue(yield* leaderboards.update(new Leaderboard({ ...a, status: "running", version: 2 })))

          const renamed = new Model({
            ...model,
            name: "renamed",
            description: null,
            continuous_self_learning: true,
            fine_tune_schedule: { run: { type: "DAILY" } },
            next_fine_tune_at: at(60),
            updated_at: at(1)
          })
          assert.isTrue(yield* models.update(renamed))
          assert.deepStrictEqual(yield* foundModel(model.id), modelView(renamed))

          const reordered = new Model({ ...renamed, leaderboard_ids: [b.id, a.id, c.id], updated_at: at(2) })
          assert.isTrue(yield* models.update(reordered))
          assert.deepStrictEqual((yield* foundModel(model.id)).leaderboard_ids, [b.id, a.id, c.id])

          const running = yield* aBoard(workspace, "running")
          const refused = new Model({ ...reordered, name: "refused", leaderboard_ids: [c.id, running.id], updated_at: at(3) })
          assert.deepStrictEqual(yield* Effect.flip(models.update(refused)), runningRejection(running.id))
          // nothing of a refused update is written
          assert.deepStrictEqual(yield* foundModel(model.id), modelView(reordered))
          assert.isFalse(yield* models.update(aModel(workspace)))
        }))

      it.effect("a running leaderboard is not assigned; one that is gone is left out without failing", () =>
        Effect.gen(function*() {
          const models = yield* ModelRepository
          const leaderboards = yield* LeaderboardRepository
          const workspace = yield* aWorkspace
          const live = yield* aBoard(workspace)
          const running = yield* aBoard(workspace, "running")
          const refused = aModel(workspace, { leaderboard_ids: [live.id, running.id] })
          assert.deepStrictEqual(yield* Effect.flip(models.insert(refused)), runningRejection(running.id))
          assert.isTrue(Option.isNone(yield* models.find(refused.id)))

          const deleted = yield* aBoard(workspace)
          assert.isTrue(yield* leaderboards.softDelete(deleted.id, at(1)))
          const model = aModel(workspace, { leaderboard_ids: [LeaderboardId.make(uuid()), live.id, deleted.id] })
          yield* models.insert(model)
          assert.deepStrictEqual((yield* foundModel(model.id)).leaderboard_ids, [live.id])
        }))

      it.effect("due schedules are the live models whose next fine-tune is at or before now; each is claimed once", () =>
        Effect.gen(function*() {
          const models = yield* ModelRepository
          const workspace = yield* aWorkspace
          const due = aModel(workspace, { fine_tune_schedule: { run: { type: "DAILY" } }, next_fine_tune_at: t0 })
          const later = aModel(workspace, { fine_tune_schedule: { run: { type: "DAILY" } }, next_fine_tune_at: at(1) })
          const deleted = aModel(workspace, { fine_tune_schedule: { run: { type: "DAILY" } }, next_fine_tune_at: t0 })
          const none = aModel(workspace)
          for (const model of [due, later, deleted, none]) yield* models.insert(model)
          yield* models.softDelete(deleted.id, t0)
          const mine: ReadonlyArray<string> = idsOf([due, later, deleted, none])
          const dueAt = (now: DateTime.Utc) =>
            Effect.map(models.dueSchedules(now), (found) => idsOf(found).filter((id) => mine.includes(id)))
          assert.deepStrictEqual(yield* dueAt(DateTime.subtract(t0, { milliseconds: 1 })), [])
          assert.deepStrictEqual(yield* dueAt(t0), [due.id])
          assert.deepStrictEqual(yield* dueAt(at(1)), [due.id, later.id])

          const next = at(60 * 24)
          // a claim from another instant than the stored one (a millisecond off) claims nothing
          assert.isFalse(yield* models.advanceSchedule(due.id, DateTime.add(t0, { milliseconds: 1 }), next))
          const claims = yield* Effect.forEach(
            Array.from({ length: 8 }),
            () => models.advanceSchedule(due.id, t0, next),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(claims.filter(Boolean).length, 1)
          assert.deepStrictEqual((yield* foundModel(due.id)).next_fine_tune_at, next)
          assert.deepStrictEqual(yield* dueAt(at(1)), [later.id])
          assert.isFalse(yield* models.advanceSchedule(deleted.id, t0, next))
        }))

      it.effect("continuous models are the live ones with continuous self-learning on", () =>
        Effect.gen(function*() {
          const models = yield* ModelRepository
          const workspace = yield* aWorkspace
          const on = aModel(workspace, { continuous_self_learning: true })
          const off = aModel(workspace)
          const deleted = aModel(workspace, { continuous_self_learning: true })
          for (const model of [on, off, deleted]) yield* models.insert(model)
          yield* models.softDelete(deleted.id, t0)
          const ids = idsOf(yield* models.continuous)
          assert.include(ids, on.id)
          assert.notInclude(ids, off.id)
          assert.notInclude(ids, deleted.id)
        }))

      it.effect("a model has one active fine-tune: a second is refused naming it, concurrent ones store one", () =>
        Effect.gen(function*() {
          const fineTunes = yield* FineTuneRepository
          const { model, run } = yield* aModelWithRun
          assert.deepStrictEqual(yield* foundRun(run.id), runView(run))
          assert.isTrue(Option.isNone(yield* fineTunes.find(FineTuneRunId.make(uuid()))))
          const second = aRun(model, { created_at: at(1) })
          const expected = new FineTuneInProgress({ model_id: model.id, run_id: run.id })
          assert.deepStrictEqual(yield* Effect.flip(fineTunes.create(second)), expected)
          assert.isTrue(yield* fineTunes.start(run.id, aDataset(4), examplesOf(4), at(1)))
          assert.deepStrictEqual(yield* Effect.flip(fineTunes.create(second)), expected)
          assert.isTrue(yield* fineTunes.end(run.id, cancelled, at(2)))
          yield* fineTunes.create(second)
          assert.deepStrictEqual(idsOf(yield* fineTunes.list(model.id, page)), [second.id, run.id])
          assert.deepStrictEqual(idsOf(yield* fineTunes.list(model.id, { limit: 1, offset: 1 })), [run.id])

          const other = aModel(yield* aWorkspace)
          yield* (yield* ModelRepository).insert(other)
          const tried = Array.from({ length: 6 }, (_, i) => aRun(other, { created_at: at(i) }))
          const exits = yield* Effect.forEach(tried, (r) => Effect.exit(fineTunes.create(r)), { concurrency: "unbounded" })
          const winners = tried.filter((_, i) => Exit.isSuccess(exits[i]!))
          assert.strictEqual(winners.length, 1)
          for (const exit of exits.filter(Exit.isFailure)) {
            assert.deepStrictEqual(
              Exit.findErrorOption(exit),
              Option.some(new FineTuneInProgress({ model_id: other.id, run_id: winners[0]!.id }))
            )
          }
        }))

      it.effect("queued fine-tunes created before a cutoff are found", () =>
        Effect.gen(function*() {
          const fineTunes = yield* FineTuneRepository
          const { run } = yield* aModelWithRun
          const { run: started } = yield* aModelWithRun
          yield* fineTunes.start(started.id, aDataset(1), examplesOf(1), at(1))
          assert.include(idsOf(yield* fineTunes.queuedBefore(at(1))), run.id)
          assert.notInclude(idsOf(yield* fineTunes.queuedBefore(at(1))), started.id)
          assert.notInclude(idsOf(yield* fineTunes.queuedBefore(t0)), run.id)
        }))

      it.effect("start stores the examples and marks the run running, once; examples come back by split in index order", () =>
        Effect.gen(function*() {
          const fineTunes = yield* FineTuneRepository
          const { run } = yield* aModelWithRun
          const examples = examplesOf(8)
          const shuffled = [5, 0, 7, 2, 1, 6, 3, 4].map((i) => examples[i]!)
          assert.isTrue(yield* fineTunes.start(run.id, aDataset(8), shuffled, at(1)))
          assert.deepStrictEqual(yield* foundRun(run.id), {
            ...runView(run),
            status: "running",
            dataset: aDataset(8),
            started_at: at(1)
          })
          assert.deepStrictEqual(yield* fineTunes.examples(run.id, "training"), examples.filter((e) => e.split === "training"))
          assert.deepStrictEqual(yield* fineTunes.examples(run.id, "held_out"), examples.filter((e) => e.split === "held_out"))

          // again, with other examples: nothing changes
          assert.isFalse(yield* fineTunes.start(run.id, aDataset(1), [{ ...examples[0]!, input: "other" }, ...examplesOf(20).slice(8)], at(2)))
          assert.deepStrictEqual((yield* foundRun(run.id)).started_at, at(1))
          assert.deepStrictEqual((yield* fineTunes.examples(run.id, "training")).length, 6)
          assert.deepStrictEqual((yield* fineTunes.examples(run.id, "training"))[0], examples[0])

          // a run ended before it started does not start; nor does an unknown one
          const { run: queued } = yield* aModelWithRun
          assert.isTrue(yield* fineTunes.end(queued.id, cancelled, at(1)))
          assert.isFalse(yield* fineTunes.start(queued.id, aDataset(1), examplesOf(1), at(2)))
          assert.deepStrictEqual(yield* fineTunes.examples(queued.id, "training"), [])
          assert.isFalse(yield* fineTunes.start(FineTuneRunId.make(uuid()), aDataset(1), examplesOf(1), at(2)))
        }))

      it.effect("many examples are stored whole", () =>
        Effect.gen(function*() {
          const fineTunes = yield* FineTuneRepository
          const { run } = yield* aModelWithRun
          const examples = examplesOf(12_003)
          assert.isTrue(yield* fineTunes.start(run.id, aDataset(examples.length), examples, at(1)))
          const training = yield* fineTunes.examples(run.id, "training")
          const heldOut = yield* fineTunes.examples(run.id, "held_out")
          assert.strictEqual(training.length + heldOut.length, examples.length)
          assert.deepStrictEqual(training.map((e) => e.index), examples.filter((e) => e.split === "training").map((e) => e.index))
          assert.deepStrictEqual(heldOut.at(-1), examples.findLast((e) => e.split === "held_out"))
        }))

      it.effect("text Postgres cannot hold (U+0000, lone surrogates) is stored as U+FFFD", () =>
        Effect.gen(function*() {
          const fineTunes = yield* FineTuneRepository
          const { model, run } = yield* aModelWithRun
          const example: TrainingExample = {
            index: 0,
            split: "training",
            leaderboard_id: LeaderboardId.make(uuid()),
            input: "a\u0000b",
            reference: "r\ud800",
            messages: [{ role: "user", content: "m\u0000\udc00" }]
          }
          assert.isTrue(yield* fineTunes.start(run.id, aDataset(1), [example], at(1)))
          assert.deepStrictEqual(yield* fineTunes.examples(run.id, "training"), [{
            ...example,
            input: "a\uFFFDb",
            reference: "r\uFFFD",
            messages: [{ role: "user", content: "m\uFFFD\uFFFD" }]
          }])
          yield* fineTunes.progress(run.id, {
            events: [{ at: "2026-11-22T10:01:00Z", level: "info", message: "step\u0000 1" }],
            metrics: { note: "x\ud800" }
          })
          assert.isTrue(yield* fineTunes.end(run.id, { status: "failed", version: null, gate: null, error: "upstream\u0000 said \udc00" }, at(2)))
          const ended = yield* foundRun(run.id)
          assert.deepStrictEqual(
            [ended.events[0]!.message, ended.metrics, ended.error],
            ["step\uFFFD 1", { note: "x\uFFFD" }, "upstream\uFFFD said \uFFFD"]
          )
          assert.isFalse((yield* foundModel(model.id)).fine_tuned)
        }))

      it.effect("progress replaces the fields given, only while the run is active", () =>
        Effect.gen(function*() {
          const fineTunes = yield* FineTuneRepository
          const { run } = yield* aModelWithRun
          const remote = { job_id: "ftjob-1", training_file: "file-1", validation_file: null, status: "queued" }
          const events = [{ at: "2026-11-22T10:01:00Z", level: "info", message: "queued" }]
          yield* fineTunes.progress(run.id, { remote, events })
          yield* fineTunes.progress(run.id, { metrics: { step: 1 }, remote: { ...remote, status: "running" } })
          const artifact = { kind: "openai", model: "ft:gpt-4o-mini:x" } as const
          yield* fineTunes.progress(run.id, { artifact })
          const progressed = {
            ...runView(run),
            remote: { ...remote, status: "running" },
            events,
            metrics: { step: 1 },
            artifact
          }
          assert.deepStrictEqual(yield* foundRun(run.id), progressed)
          assert.isTrue(yield* fineTunes.end(run.id, cancelled, at(1)))
          yield* fineTunes.progress(run.id, { metrics: { step: 2 }, events: [] })
          assert.deepStrictEqual(yield* foundRun(run.id), { ...progressed, status: "cancelled", finished_at: at(1) })
          yield* fineTunes.progress(FineTuneRunId.make(uuid()), { metrics: { step: 2 } })
        }))

      it.effect("a succeeded end creates the version with it, once; the model is fine-tuned from then on", () =>
        Effect.gen(function*() {
          const fineTunes = yield* FineTuneRepository
          const { model, run } = yield* aModelWithRun
          assert.isFalse((yield* foundModel(model.id)).fine_tuned)
          yield* fineTunes.start(run.id, aDataset(2), examplesOf(2), at(1))
          const version = aVersion(run)
          const gate = { candidate_score: 0.8, deployed_score: null, deployed_version_id: null, decision: "deploy", reason: "first" } as const
          assert.isTrue(yield* fineTunes.end(run.id, { ...succeededWith(version), gate }, at(10)))
          const ended = {
            ...runView(run),
            status: "succeeded",
            dataset: aDataset(2),
            started_at: at(1),
            finished_at: at(10),
            version_id: version.id,
            gate
          } as const
          assert.deepStrictEqual(yield* foundRun(run.id), ended)
          assert.deepStrictEqual(Option.map(yield* fineTunes.findVersion(version.id), versionView), Option.some(versionView(version)))
          assert.isTrue((yield* foundModel(model.id)).fine_tuned)

          const late = aVersion(run)
          assert.isFalse(yield* fineTunes.end(run.id, succeededWith(late), at(11)))
          assert.isFalse(yield* fineTunes.end(run.id, { status: "failed", version: null, gate: null, error: "late" }, at(11)))
          assert.deepStrictEqual(yield* foundRun(run.id), ended)
          assert.isTrue(Option.isNone(yield* fineTunes.findVersion(late.id)))
          assert.deepStrictEqual(idsOf(yield* fineTunes.versions(model.id)), [version.id])
          assert.isFalse(yield* fineTunes.end(FineTuneRunId.make(uuid()), cancelled, at(11)))

          // a later run's version is listed first
          const next = aRun(model, { created_at: at(20) })
          yield* fineTunes.create(next)
          const newer = aVersion(next, { created_at: at(30), completed_at: at(30) })
          assert.isTrue(yield* fineTunes.end(next.id, succeededWith(newer), at(30)))
          assert.deepStrictEqual(idsOf(yield* fineTunes.versions(model.id)), [newer.id, version.id])
          assert.deepStrictEqual(yield* fineTunes.versions(ModelId.make(uuid())), [])
        }))

      it.effect("activating a version stops the one active before; only deployment changes", () =>
        Effect.gen(function*() {
          const fineTunes = yield* FineTuneRepository
          const { model, run, version: first } = yield* aVersionMade()
          assert.isTrue(Option.isNone(yield* fineTunes.activeVersion(model.id)))
          yield* fineTunes.activate(first.id, at(11))
          assert.deepStrictEqual(
            Option.map(yield* fineTunes.activeVersion(model.id), versionView),
            Option.some(versionView(new ModelVersion({ ...first, deployment_status: "active", deployed_at: at(11) })))
          )
          const next = aRun(model, { created_at: at(20) })
          yield* fineTunes.create(next)
          const second = aVersion(next, { created_at: at(30), completed_at: at(30) })
          yield* fineTunes.end(next.id, succeededWith(second), at(30))
          yield* fineTunes.activate(second.id, at(31))
          assert.deepStrictEqual(
            (yield* fineTunes.versions(model.id)).map((v) => [v.id, v.deployment_status]),
            [[second.id, "active"], [first.id, "stopped"]]
          )
          // activating the active one again changes nothing; an unknown one does nothing
          yield* fineTunes.activate(second.id, at(32))
          yield* fineTunes.activate(ModelVersionId.make(uuid()), at(32))
          assert.deepStrictEqual(Option.map(yield* fineTunes.activeVersion(model.id), (v) => v.id), Option.some(second.id))
          assert.strictEqual(first.fine_tune_run_id, run.id)

          // concurrent activations leave exactly one active
          for (let round = 0; round < 5; round++) {
            yield* Effect.forEach([first.id, second.id], (id) => fineTunes.activate(id, at(40 + round)), { concurrency: "unbounded" })
            const active = (yield* fineTunes.versions(model.id)).filter((v) => v.deployment_status === "active")
            assert.strictEqual(active.length, 1)
          }
        }))
    })
  })

/** A run as RunRepository.create takes it, on `leaderboard`. */
const aLeaderboardRun = (leaderboard: Leaderboard) =>
  new Run({
    id: RunId.make(uuid()),
    leaderboard_id: leaderboard.id,
    workspace_id: leaderboard.workspace_id,
    status: "queued",
    run_source: "manual",
    eval_type: "exact",
    model_ids: [uuid()],
    improve_dataset: false,
    progress: { total: 0, completed: 0, failed: 0 },
    results: [],
    winner_leaderboard_model_id: null,
    dataset: null,
    error: null,
    created_at: t0,
    started_at: null,
    finished_at: null
  })

/**
 * What only Postgres can show: an assignment against a run starting on the same leaderboard in
 * another transaction, and the version rows the database itself keeps immutable.
 */
export const modelRepositoryPostgresContract = (
  makeLayer: () => Layer.Layer<Ports | RunRepository | SqlClient.SqlClient, unknown>
) =>
  describe("ModelRepository and FineTuneRepository contract: Postgres only", () => {
    layer(makeLayer(), { timeout: 60_000 })((it) => {
      /**
       * Runs `assign` while another transaction has marked `leaderboard` running, as a run's start
       * does, and has not committed: the assignment waits for it and then sees the run.
       */
      const whileRunStarts = <E>(leaderboard: Leaderboard, assign: Effect.Effect<unknown, E>) =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const marked = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const starting = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
            yield* sql`SELECT 1 FROM leaderboards WHERE id = ${leaderboard.id} FOR UPDATE`
            yield* sql`UPDATE leaderboards SET status = 'running', version = version + 1 WHERE id = ${leaderboard.id}`
            yield* Deferred.succeed(marked, undefined)
            yield* Deferred.await(release)
          })))
          yield* Deferred.await(marked)
          const assigning = yield* Effect.forkChild(Effect.exit(assign))
          // the assignment is waiting on the leaderboard's row
          yield* sql<{ waiting: number }>`
            SELECT count(*)::int AS waiting FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`.pipe(
            Effect.repeat({ schedule: Schedule.spaced("10 millis"), until: ([row]) => row!.waiting > 0 }),
            Effect.timeout("10 seconds"),
            TestClock.withLive
          )
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(starting)
          return yield* Fiber.join(assigning)
        })

      it.effect("an assignment waits for a run starting on its leaderboard, then is refused", () =>
        Effect.gen(function*() {
          const models = yield* ModelRepository
          const workspace = yield* aWorkspace
          const leaderboard = yield* aBoard(workspace)
          const model = aModel(workspace, { leaderboard_ids: [leaderboard.id] })
          const inserted = yield* whileRunStarts(leaderboard, models.insert(model))
          assert.deepStrictEqual(Exit.findErrorOption(inserted), Option.some(runningRejection(leaderboard.id)))

          const other = yield* aBoard(workspace)
          const unassigned = aModel(workspace)
          yield* models.insert(unassigned)
          const updated = yield* whileRunStarts(other, models.update(new Model({ ...unassigned, leaderboard_ids: [other.id] })))
          assert.deepStrictEqual(Exit.findErrorOption(updated), Option.some(runningRejection(other.id)))
          assert.deepStrictEqual((yield* foundModel(unassigned.id)).leaderboard_ids, [])
        }))

      it.effect("assignments racing runs' starts: never a deadlock; an assignment fails only on the running leaderboard", () =>
        Effect.gen(function*() {
          const models = yield* ModelRepository
          const runs = yield* RunRepository
          const workspace = yield* aWorkspace
          for (let round = 0; round < 20; round++) {
            const boards = [yield* aBoard(workspace), yield* aBoard(workspace)]
            const started = boards[round % 2]!
            const model = aModel(workspace, { leaderboard_ids: round % 3 === 0 ? [boards[1]!.id, boards[0]!.id] : idsOf(boards) })
            const [run, assigned] = yield* Effect.all(
              [Effect.exit(runs.create(aLeaderboardRun(started))), Effect.exit(models.insert(model))],
              { concurrency: "unbounded" }
            )
            assert.isTrue(Exit.isSuccess(run))
            if (Exit.isFailure(assigned)) {
              assert.deepStrictEqual(Exit.findErrorOption(assigned), Option.some(runningRejection(started.id)))
            } else {
              assert.deepStrictEqual((yield* foundModel(model.id)).leaderboard_ids, model.leaderboard_ids)
            }
          }
        }))

      it.effect("a version's content cannot change, nor can it be deleted, even by hand; its deployment can", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const { version } = yield* aVersionMade()
          const refused = (statement: Effect.Effect<unknown, unknown>) =>
            Effect.map(Effect.exit(statement), (exit) => assert.isTrue(Exit.isFailure(exit)))
          yield* refused(sql`UPDATE model_versions SET artifact = '{"kind":"openai","model":"other"}' WHERE id = ${version.id}`)
          yield* refused(sql`UPDATE model_versions SET metrics = '{}' WHERE id = ${version.id}`)
          yield* refused(sql`UPDATE model_versions SET created_at = now() WHERE id = ${version.id}`)
          yield* refused(sql`DELETE FROM model_versions WHERE id = ${version.id}`)
          yield* sql`UPDATE model_versions SET deployment_status = 'failed', deployed_at = now() WHERE id = ${version.id}`
          const [row] = yield* sql<{ artifact: unknown; deployment_status: string }>`
            SELECT artifact, deployment_status FROM model_versions WHERE id = ${version.id}`
          assert.deepStrictEqual(row, { artifact: version.artifact, deployment_status: "failed" })
        }))

      it.effect("a workspace removed from the database takes its models, fine-tunes and versions with it", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const { model, version } = yield* aVersionMade()
          yield* sql`DELETE FROM workspaces WHERE id = ${model.workspace_id}`
          assert.isTrue(Option.isNone(yield* (yield* FineTuneRepository).findVersion(version.id)))
          assert.isTrue(Option.isNone(yield* (yield* ModelRepository).find(model.id)))
        }))
    })
  })
