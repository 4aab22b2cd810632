import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import {
  FineTuneInProgress,
  FineTuneRepository,
  FineTuneRun,
  ModelVersion,
  type TrainingExample
} from "@podium/domain/models"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { storableJson, storableText } from "@podium/domain/shared"
import { NullableTimestamp, Timestamp, toDate } from "../Rows.ts"

const RunRow = Schema.Struct({
  ...FineTuneRun.fields,
  created_at: Timestamp,
  started_at: NullableTimestamp,
  finished_at: NullableTimestamp
})
const decodeRuns = Schema.decodeUnknownEffect(Schema.Array(RunRow))
const VersionRow = Schema.Struct({ ...ModelVersion.fields, created_at: Timestamp, completed_at: Timestamp, deployed_at: NullableTimestamp })
const decodeVersions = Schema.decodeUnknownEffect(Schema.Array(VersionRow))

/** Examples per INSERT when a run's examples are stored. */
const exampleBatch = 5_000

const layer = Layer.effect(
  FineTuneRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient

    /** A jsonb value; its text (upstream events, metrics, errors) made storable. */
    const json = (value: unknown) => pg.json(storableJson(value))
    const nullableJson = (value: unknown) => value === null || value === undefined ? null : json(value)

    const runColumns = sql`id::text AS id, model_id::text AS model_id, workspace_id::text AS workspace_id, status,
      trigger, trainer, base_model, options, dataset, remote, metrics, events, artifact, version_id::text AS version_id,
      gate, error, created_at, started_at, finished_at`
    const runs = (where: Statement.Fragment) =>
      sql`SELECT ${runColumns} FROM fine_tune_runs WHERE ${where}`.pipe(
        Effect.flatMap(decodeRuns),
        Effect.map((rows) => rows.map((row) => new FineTuneRun(row))),
        Effect.orDie
      )

    const versionColumns = sql`id::text AS id, model_id::text AS model_id, fine_tune_run_id::text AS fine_tune_run_id,
      trainer, base_model, metrics, artifact, deployment_status, deployment, deployment_error, deployed_at, created_at, completed_at`
    const versions = (where: Statement.Fragment) =>
      sql`SELECT ${versionColumns} FROM model_versions WHERE ${where}`.pipe(
        Effect.flatMap(decodeVersions),
        Effect.map((rows) => rows.map((row) => new ModelVersion(row))),
        Effect.orDie
      )
    const first = <A>(rows: ReadonlyArray<A>) => Option.fromNullishOr(rows[0])

    const insertExamples = (runId: string, examples: ReadonlyArray<TrainingExample>) =>
      Effect.forEach(
        Array.from({ length: Math.ceil(examples.length / exampleBatch) }, (_, i) =>
          examples.slice(i * exampleBatch, (i + 1) * exampleBatch)),
        (batch) =>
          sql`
            INSERT INTO fine_tune_examples (run_id, idx, split, leaderboard_id, input, reference, messages)
            SELECT ${runId}, u.idx, u.split, u.leaderboard_id, u.input, u.reference, u.messages
            FROM unnest(${batch.map((e) => e.index)}::int[], ${batch.map((e) => e.split)}::text[],
              ${batch.map((e) => e.leaderboard_id)}::uuid[], ${batch.map((e) => storableText(e.input))}::text[],
              ${batch.map((e) => storableText(e.reference))}::text[],
              ${batch.map((e) => JSON.stringify(storableJson(e.messages)))}::jsonb[])
              AS u(idx, split, leaderboard_id, input, reference, messages)
            ON CONFLICT DO NOTHING`,
        { discard: true }
      )

    /** Stores the run, or names the model's active run; one that ended meanwhile frees the model: try again. */
    const create = (run: FineTuneRun): Effect.Effect<void, FineTuneInProgress, never> =>
      Effect.gen(function*() {
        const inserted = yield* sql`
          INSERT INTO fine_tune_runs (id, model_id, workspace_id, status, trigger, trainer, base_model, options, dataset,
            remote, metrics, events, artifact, version_id, gate, error, created_at, started_at, finished_at)
          VALUES (${run.id}, ${run.model_id}, ${run.workspace_id}, ${run.status}, ${run.trigger}, ${run.trainer},
            ${json(run.base_model)}, ${json(run.options)}, ${nullableJson(run.dataset)}, ${nullableJson(run.remote)},
            ${nullableJson(run.metrics)}, ${json(run.events)}, ${nullableJson(run.artifact)}, ${run.version_id},
            ${nullableJson(run.gate)}, ${run.error === null ? null : storableText(run.error)}, ${toDate(run.created_at)},
            ${run.started_at === null ? null : toDate(run.started_at)},
            ${run.finished_at === null ? null : toDate(run.finished_at)})
          ON CONFLICT (model_id) WHERE status IN ('queued', 'running') DO NOTHING
          RETURNING id`
        if (inserted.length > 0) return
        const [active] = yield* sql<{ id: string }>`
          SELECT id::text AS id FROM fine_tune_runs WHERE model_id = ${run.model_id} AND status IN ('queued', 'running')`
        if (active === undefined) return yield* create(run)
        return yield* new FineTuneInProgress({ model_id: run.model_id, run_id: active.id })
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    return FineTuneRepository.of({
      create,
      find: (id) => Effect.map(runs(sql`id = ${id}`), first),
      list: (modelId, page) =>
        runs(sql`model_id = ${modelId} ORDER BY created_at DESC, id DESC LIMIT ${page.limit} OFFSET ${page.offset}`),
      queuedBefore: (cutoff) => runs(sql`status = 'queued' AND created_at < ${toDate(cutoff)} ORDER BY created_at, id`),
      start: (runId, dataset, examples, now) =>
        sql.withTransaction(Effect.gen(function*() {
          const started = yield* sql`
            UPDATE fine_tune_runs SET status = 'running', dataset = ${json(dataset)}, started_at = ${toDate(now)}
            WHERE id = ${runId} AND status = 'queued' RETURNING id`
          if (started.length === 0) return false
          yield* insertExamples(runId, examples)
          return true
        })).pipe(Effect.orDie),
      examples: (runId, split) =>
        sql<{ idx: number; leaderboard_id: LeaderboardId; input: string; reference: string; messages: TrainingExample["messages"] }>`
          SELECT idx, leaderboard_id::text AS leaderboard_id, input, reference, messages FROM fine_tune_examples
          WHERE run_id = ${runId} AND split = ${split} ORDER BY idx`.pipe(
          Effect.map((rows) => rows.map(({ idx, ...row }): TrainingExample => ({ index: idx, split, ...row }))),
          Effect.orDie
        ),
      progress: (runId, progress) =>
        sql`
          UPDATE fine_tune_runs SET remote = COALESCE(${nullableJson(progress.remote)}, remote),
            events = COALESCE(${nullableJson(progress.events)}, events),
            metrics = CASE WHEN ${nullableJson(progress.metrics)}::jsonb IS NULL THEN metrics
              ELSE COALESCE(metrics, '{}'::jsonb) || ${nullableJson(progress.metrics)}::jsonb END,
            artifact = COALESCE(${nullableJson(progress.artifact)}, artifact)
          WHERE id = ${runId} AND status IN ('queued', 'running')
            AND (${progress.while_training === true} = false OR artifact IS NULL)
          RETURNING id`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
      end: (runId, end, now) =>
        sql.withTransaction(Effect.gen(function*() {
          const { version } = end
          const ended = yield* sql`
            UPDATE fine_tune_runs SET status = ${end.status}, gate = ${nullableJson(end.gate)},
              error = ${end.error === null ? null : storableText(end.error)}, finished_at = ${toDate(now)},
              version_id = COALESCE(${version?.id ?? null}::uuid, version_id)
            WHERE id = ${runId} AND status IN ('queued', 'running') RETURNING id`
          if (ended.length === 0) return false
          if (version !== null) {
            yield* sql`
              INSERT INTO model_versions (id, model_id, fine_tune_run_id, trainer, base_model, metrics, artifact,
                deployment_status, created_at, completed_at)
              VALUES (${version.id}, ${version.model_id}, ${version.fine_tune_run_id}, ${version.trainer},
                ${json(version.base_model)}, ${json(version.metrics)}, ${json(version.artifact)},
                ${version.deployment_status}, ${toDate(version.created_at)}, ${toDate(version.completed_at)})`
          }
          return true
        })).pipe(Effect.orDie),
      versions: (modelId) => versions(sql`model_id = ${modelId} ORDER BY created_at DESC, id DESC`),
      findVersion: (id) => Effect.map(versions(sql`id = ${id}`), first),
      activeVersion: (modelId) => Effect.map(versions(sql`model_id = ${modelId} AND deployment_status = 'active'`), first),
      activate: (versionId, now) =>
        sql.withTransaction(Effect.gen(function*() {
          // the model's row serializes activations of its versions (NO KEY: a version being created does not wait)
          const [model] = yield* sql<{ id: string }>`
            SELECT id FROM models WHERE id = (SELECT model_id FROM model_versions WHERE id = ${versionId})
            FOR NO KEY UPDATE`
          if (model === undefined) return
          yield* sql`
            UPDATE model_versions SET deployment_status = 'stopped'
            WHERE model_id = ${model.id} AND deployment_status = 'active' AND id <> ${versionId}`
          yield* sql`
            UPDATE model_versions SET deployment_status = 'active', deployed_at = ${toDate(now)}
            WHERE id = ${versionId} AND deployment_status <> 'active'`
        })).pipe(Effect.orDie)
    })
  })
)

export const FineTuneRepositoryPg = { layer }
