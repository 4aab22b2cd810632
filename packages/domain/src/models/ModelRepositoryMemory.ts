import { Data, DateTime, Effect, Layer, Option, SynchronizedRef } from "effect"
import { type LeaderboardId, LeaderboardRepository } from "../leaderboards/index.ts"
import { storableJson, storableText } from "../shared/index.ts"
import { runningRejection } from "./Assignment.ts"
import { FineTuneRun, isActive } from "./FineTuneRun.ts"
import { Model } from "./Model.ts"
import { FineTuneInProgress } from "./ModelErrors.ts"
import { FineTuneRepository, type TrainingExample } from "./FineTuneRepository.ts"
import { ModelRepository } from "./ModelRepository.ts"
import { ModelVersion } from "./ModelVersion.ts"

/** What a Postgres constraint refuses: a defect there, so one here. */
class ConstraintViolated extends Data.Error<{ readonly constraint: string }> {}

const byText = (a: string, b: string) => a < b ? -1 : a > b ? 1 : 0
const byTime = (a: DateTime.Utc, b: DateTime.Utc) => DateTime.toEpochMillis(a) - DateTime.toEpochMillis(b)
const oldestFirst = (a: Model, b: Model) => byTime(a.created_at, b.created_at) || byText(a.id, b.id)
const newestFirst = <A extends { readonly id: string; readonly created_at: DateTime.Utc }>(a: A, b: A) =>
  byTime(b.created_at, a.created_at) || byText(b.id, a.id)

/** A jsonb column: its text made storable, and only what JSON keeps. */
const json = <A>(value: A): A => JSON.parse(JSON.stringify(storableJson(value)))
const nullableText = (value: string | null) => value === null ? null : storableText(value)

/** A store that answers after a yield, as a round trip would, so concurrent callers interleave as against Postgres. */
const makeStore = <T>(initial: T) =>
  Effect.map(SynchronizedRef.make(initial), (ref) => ({
    read: <A>(f: (tables: T) => A) => Effect.andThen(Effect.yieldNow, Effect.map(SynchronizedRef.get(ref), f)),
    /** Applies `f` under the lock; a failure or defect of its effect leaves the tables as they were. */
    write: <A, E>(f: (tables: T) => Effect.Effect<readonly [A, T], E>) =>
      Effect.andThen(Effect.yieldNow, SynchronizedRef.modifyEffect(ref, f))
  }))

interface StoredModel {
  readonly model: Model
  readonly deleted: boolean
}

const everyRun = { limit: Number.MAX_SAFE_INTEGER, offset: 0 }

const sameIds = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((id, i) => id === b[i])

/**
 * ModelRepository in memory, with the Postgres adapter's semantics. Leaderboards' statuses are read
 * through the LeaderboardRepository it is given, and `fine_tuned` through the FineTuneRepository.
 * Unlike Postgres it holds no lock on the leaderboards it checks: an assignment racing a run's start
 * may both pass here (the Postgres adapter takes the leaderboards' rows).
 */
const modelLayer = Layer.effect(
  ModelRepository,
  Effect.gen(function*() {
    const leaderboards = yield* LeaderboardRepository
    const fineTunes = yield* FineTuneRepository
    const { read, write } = yield* makeStore<ReadonlyMap<string, StoredModel>>(new Map())

    const withFineTuned = (model: Model) =>
      Effect.map(fineTunes.list(model.id, everyRun), (runs) =>
        new Model({ ...model, fine_tuned: runs.some((run) => run.status === "succeeded") }))
    const live = (keep: (model: Model) => boolean, order: (a: Model, b: Model) => number) =>
      Effect.flatMap(
        read((tables) => [...tables.values()].flatMap((s) => !s.deleted && keep(s.model) ? [s.model] : []).sort(order)),
        Effect.forEach(withFineTuned)
      )

    /** The live leaderboards of `ids`, in their order; fails with the first running one of `added`. */
    const assignment = (ids: ReadonlyArray<LeaderboardId>, added: ReadonlyArray<LeaderboardId>) =>
      Effect.gen(function*() {
        if (new Set(ids).size !== ids.length) {
          return yield* Effect.die(new ConstraintViolated({ constraint: "model_leaderboards_pkey" }))
        }
        const found = yield* Effect.forEach(ids, (id) => leaderboards.find(id))
        const statuses = new Map(found.flatMap((l) => Option.isSome(l) ? [[l.value.id, l.value.status] as const] : []))
        const running = added.find((id) => statuses.get(id) === "running")
        if (running !== undefined) return yield* runningRejection(running)
        return ids.filter((id) => statuses.has(id))
      })

    return ModelRepository.of({
      insert: (model) =>
        write((tables) =>
          Effect.gen(function*() {
            if (tables.has(model.id)) return yield* Effect.die(new ConstraintViolated({ constraint: "models_pkey" }))
            const leaderboard_ids = yield* assignment(model.leaderboard_ids, model.leaderboard_ids)
            const stored = new Model({ ...model, leaderboard_ids, extra: json(model.extra), fine_tuned: false })
            return [undefined, new Map(tables).set(model.id, { model: stored, deleted: false })] as const
          })
        ),
      find: (id) =>
        Effect.flatMap(
          read((tables) => Option.filter(Option.fromUndefinedOr(tables.get(id)), (s) => !s.deleted)),
          (found) => Effect.transposeOption(Option.map(found, (s) => withFineTuned(s.model)))
        ),
      list: (workspaceId, page) =>
        Effect.map(live((m) => m.workspace_id === workspaceId, oldestFirst), (models) =>
          models.slice(page.offset, page.offset + page.limit)),
      update: (next) =>
        write((tables) =>
          Effect.gen(function*() {
            const stored = tables.get(next.id)
            if (stored === undefined || stored.deleted) return [false, tables] as const
            const current = stored.model.leaderboard_ids
            const leaderboard_ids = sameIds(current, next.leaderboard_ids)
              ? current
              : yield* assignment(next.leaderboard_ids, next.leaderboard_ids.filter((id) => !current.includes(id)))
            const model = new Model({
              ...next,
              workspace_id: stored.model.workspace_id,
              created_at: stored.model.created_at,
              leaderboard_ids,
              // an unchanged schedule keeps its stored next occurrence (the scheduler may have claimed the one read)
              next_fine_tune_at: stored.model.next_fine_tune_at !== null &&
                  JSON.stringify(stored.model.fine_tune_schedule) === JSON.stringify(next.fine_tune_schedule)
                ? stored.model.next_fine_tune_at
                : next.next_fine_tune_at,
              extra: json(next.extra),
              fine_tuned: false
            })
            return [true, new Map(tables).set(next.id, { model, deleted: false })] as const
          })
        ),
      softDelete: (id) =>
        write((tables) => {
          const stored = tables.get(id)
          if (stored === undefined || stored.deleted) return Effect.succeed([false, tables] as const)
          return Effect.succeed([true, new Map(tables).set(id, { ...stored, deleted: true })] as const)
        }),
      dueSchedules: (now) =>
        live(
          (m) => m.next_fine_tune_at !== null && !DateTime.isGreaterThan(m.next_fine_tune_at, now),
          (a, b) => byTime(a.next_fine_tune_at!, b.next_fine_tune_at!) || byText(a.id, b.id)
        ),
      advanceSchedule: (id, from, next) =>
        write((tables) => {
          const stored = tables.get(id)
          const due = stored !== undefined && !stored.deleted && stored.model.next_fine_tune_at !== null &&
            byTime(stored.model.next_fine_tune_at, from) === 0
          if (!due) return Effect.succeed([false, tables] as const)
          const model = new Model({ ...stored.model, next_fine_tune_at: next })
          return Effect.succeed([true, new Map(tables).set(id, { ...stored, model })] as const)
        }),
      continuous: live((m) => m.continuous_self_learning, oldestFirst)
    })
  })
)

interface FineTuneTables {
  readonly runs: ReadonlyMap<string, FineTuneRun>
  /** By run, in index order. */
  readonly examples: ReadonlyMap<string, ReadonlyArray<TrainingExample>>
  readonly versions: ReadonlyMap<string, ModelVersion>
}

/** FineTuneRepository in memory, with the Postgres adapter's semantics (constraints included, as defects). */
const fineTuneLayer = Layer.effect(
  FineTuneRepository,
  Effect.gen(function*() {
    const { read, write } = yield* makeStore<FineTuneTables>({ runs: new Map(), examples: new Map(), versions: new Map() })

    const runs = (tables: FineTuneTables, keep: (run: FineTuneRun) => boolean) => [...tables.runs.values()].filter(keep)
    const versionsOf = (tables: FineTuneTables, modelId: string) =>
      [...tables.versions.values()].filter((v) => v.model_id === modelId)
    const withRun = (tables: FineTuneTables, run: FineTuneRun): FineTuneTables => ({
      ...tables,
      runs: new Map(tables.runs).set(run.id, run)
    })
    const activeRun = (tables: FineTuneTables, runId: string) =>
      Option.filter(Option.fromUndefinedOr(tables.runs.get(runId)), (run) => isActive(run.status))

    const storedRun = (run: FineTuneRun) =>
      new FineTuneRun({
        ...run,
        base_model: json(run.base_model),
        options: json(run.options),
        dataset: run.dataset === null ? null : json(run.dataset),
        remote: run.remote === null ? null : json(run.remote),
        metrics: run.metrics === null ? null : json(run.metrics),
        events: json(run.events),
        artifact: run.artifact === null ? null : json(run.artifact),
        gate: run.gate === null ? null : json(run.gate),
        error: nullableText(run.error)
      })

    const storedExample = (example: TrainingExample): TrainingExample => ({
      index: example.index,
      split: example.split,
      leaderboard_id: example.leaderboard_id,
      input: storableText(example.input),
      reference: storableText(example.reference),
      messages: json(example.messages)
    })

    const storedVersion = (tables: FineTuneTables, version: ModelVersion) =>
      tables.versions.has(version.id)
        ? Effect.die(new ConstraintViolated({ constraint: "model_versions_pkey" }))
        : [...tables.versions.values()].some((v) => v.fine_tune_run_id === version.fine_tune_run_id)
        ? Effect.die(new ConstraintViolated({ constraint: "model_versions_fine_tune_run_id_key" }))
        : version.deployment_status === "active" &&
            versionsOf(tables, version.model_id).some((v) => v.deployment_status === "active")
        ? Effect.die(new ConstraintViolated({ constraint: "model_versions_active_idx" }))
        : Effect.succeed(
          new ModelVersion({
            ...version,
            base_model: json(version.base_model),
            metrics: json(version.metrics),
            artifact: json(version.artifact)
          })
        )

    return FineTuneRepository.of({
      create: (run) =>
        write((tables) =>
          Effect.gen(function*() {
            const [active] = runs(tables, (r) => r.model_id === run.model_id && isActive(r.status))
            if (active !== undefined && isActive(run.status)) {
              return yield* new FineTuneInProgress({ model_id: run.model_id, run_id: active.id })
            }
            if (tables.runs.has(run.id)) return yield* Effect.die(new ConstraintViolated({ constraint: "fine_tune_runs_pkey" }))
            return [undefined, withRun(tables, storedRun(run))] as const
          })
        ),
      find: (id) => read((tables) => Option.fromUndefinedOr(tables.runs.get(id))),
      list: (modelId, page) =>
        read((tables) =>
          runs(tables, (r) => r.model_id === modelId).sort(newestFirst).slice(page.offset, page.offset + page.limit)
        ),
      queuedBefore: (cutoff) =>
        read((tables) =>
          runs(tables, (r) => r.status === "queued" && DateTime.isLessThan(r.created_at, cutoff))
            .sort((a, b) => byTime(a.created_at, b.created_at) || byText(a.id, b.id))
        ),
      start: (runId, dataset, examples, now) =>
        write((tables) => {
          const run = tables.runs.get(runId)
          if (run === undefined || run.status !== "queued") return Effect.succeed([false, tables] as const)
          // a repeated index is stored once, as given first
          const byIndex = new Map<number, TrainingExample>()
          for (const example of examples) if (!byIndex.has(example.index)) byIndex.set(example.index, storedExample(example))
          const started = new FineTuneRun({ ...run, status: "running", dataset: json(dataset), started_at: now })
          return Effect.succeed([true, {
            ...withRun(tables, started),
            examples: new Map(tables.examples).set(runId, [...byIndex.values()].sort((a, b) => a.index - b.index))
          }] as const)
        }),
      examples: (runId, split) => read((tables) => (tables.examples.get(runId) ?? []).filter((e) => e.split === split)),
      progress: (runId, progress) =>
        write((tables) =>
          Effect.succeed(Option.match(Option.filter(activeRun(tables, runId), (run) => progress.while_training !== true || run.artifact === null), {
            onNone: () => [false, tables] as const,
            onSome: (run) =>
              [true, withRun(tables, new FineTuneRun({
                ...run,
                remote: progress.remote === undefined ? run.remote : json(progress.remote),
                events: progress.events === undefined ? run.events : json(progress.events),
                metrics: progress.metrics === undefined ? run.metrics : { ...run.metrics, ...json(progress.metrics) },
                artifact: progress.artifact === undefined ? run.artifact : json(progress.artifact)
              }))] as const
          }))
        ),
      end: (runId, end, now) =>
        write((tables) =>
          Effect.gen(function*() {
            const active = activeRun(tables, runId)
            if (Option.isNone(active)) return [false, tables] as const
            const run = new FineTuneRun({
              ...active.value,
              status: end.status,
              gate: end.gate === null ? null : json(end.gate),
              error: nullableText(end.error),
              finished_at: now,
              version_id: end.version?.id ?? active.value.version_id
            })
            const ended = withRun(tables, run)
            if (end.version === null) return [true, ended] as const
            const version = yield* storedVersion(tables, end.version)
            return [true, { ...ended, versions: new Map(tables.versions).set(version.id, version) }] as const
          })
        ),
      versions: (modelId) => read((tables) => versionsOf(tables, modelId).sort(newestFirst)),
      findVersion: (id) => read((tables) => Option.fromUndefinedOr(tables.versions.get(id))),
      activeVersion: (modelId) =>
        read((tables) => Option.fromUndefinedOr(versionsOf(tables, modelId).find((v) => v.deployment_status === "active"))),
      activate: (versionId, now) =>
        write((tables) => {
          const chosen = tables.versions.get(versionId)
          if (chosen === undefined || chosen.deployment_status === "active") return Effect.succeed([undefined, tables] as const)
          const versions = new Map(tables.versions)
          for (const v of versionsOf(tables, chosen.model_id)) {
            if (v.deployment_status === "active") versions.set(v.id, new ModelVersion({ ...v, deployment_status: "stopped" }))
          }
          versions.set(versionId, new ModelVersion({ ...chosen, deployment_status: "active", deployed_at: now }))
          return Effect.succeed([undefined, { ...tables, versions }] as const)
        })
    })
  })
)

/** Requires a LeaderboardRepository (statuses) and a FineTuneRepository (`fine_tuned`). */
export const ModelRepositoryMemory = { layer: modelLayer }
export const FineTuneRepositoryMemory = { layer: fineTuneLayer }
