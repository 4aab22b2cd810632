import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { Model, ModelRepository, runningRejection } from "@podium/domain/models"
import { storableJson } from "@podium/domain/shared"
import { ChangeFeed } from "../ChangeFeedPg.ts"
import { NullableTimestamp, Timestamp, toDate, toDateOrNull } from "../Rows.ts"

const ModelRow = Schema.Struct({
  ...Model.fields,
  next_fine_tune_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp
})
const decodeModels = Schema.decodeUnknownEffect(Schema.Array(ModelRow))

const sameIds = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((id, i) => id === b[i])

const layer = Layer.effect(
  ModelRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient
    // the model's serving copy: this instance's is dropped at once after a write here
    const feed = yield* ChangeFeed

    const columns = sql`m.id::text AS id, m.workspace_id::text AS workspace_id, m.name, m.model_name, m.description,
      m.creation_mode, m.selected_base_model_version_id, m.selected_base_model_resolution_id, m.auto_update_model,
      m.continuous_self_learning, m.hypertuning_parameters,
      ARRAY(SELECT a.leaderboard_id::text FROM model_leaderboards a WHERE a.model_id = m.id ORDER BY a.position)
        AS leaderboard_ids,
      m.fine_tune_schedule, m.next_fine_tune_at, m.gate_policy,
      EXISTS (SELECT 1 FROM fine_tune_runs r WHERE r.model_id = m.id AND r.status = 'succeeded') AS fine_tuned,
      m.extra, m.created_at, m.updated_at`

    const models = (where: Statement.Fragment) =>
      sql`SELECT ${columns} FROM models m WHERE ${where}`.pipe(
        Effect.flatMap(decodeModels),
        Effect.map((rows) => rows.map((row) => new Model(row))),
        Effect.orDie
      )

    /**
     * Takes the live leaderboards among `ids` in id order, shared: a run's start (which takes its
     * leaderboard's row for update before marking it running) waits for this transaction, or has
     * committed and is seen. One order for every taker, so they never wait on each other crosswise.
     */
    const lockLeaderboards = (ids: ReadonlyArray<string>) =>
      ids.length === 0
        ? Effect.succeed(new Map<string, string>())
        : Effect.map(
          sql<{ id: string; status: string }>`
            SELECT id::text AS id, status FROM leaderboards
            WHERE id = ANY(${ids}::uuid[]) AND deleted_at IS NULL ORDER BY id FOR SHARE`,
          (rows) => new Map(rows.map((row) => [row.id, row.status]))
        )

    /** Fails with the first running leaderboard among `added`. */
    const refuseRunning = (statuses: ReadonlyMap<string, string>, added: ReadonlyArray<string>) => {
      const running = added.find((id) => statuses.get(id) === "running")
      return running === undefined ? Effect.void : Effect.fail(runningRejection(running))
    }

    /** Replaces the assignment with the live ones of `ids`, in their order (one that is gone is skipped). */
    const assign = (modelId: string, ids: ReadonlyArray<string>, live: ReadonlyMap<string, string>) =>
      Effect.gen(function*() {
        yield* sql`DELETE FROM model_leaderboards WHERE model_id = ${modelId}`
        const kept = ids.filter((id) => live.has(id))
        if (kept.length === 0) return
        yield* sql`
          INSERT INTO model_leaderboards (model_id, leaderboard_id, position)
          SELECT ${modelId}, u.id, u.position FROM unnest(${kept}::uuid[]) WITH ORDINALITY AS u(id, position)`
      })

    return ModelRepository.of({
      insert: (model) =>
        sql.withTransaction(Effect.gen(function*() {
          const live = yield* lockLeaderboards(model.leaderboard_ids)
          yield* refuseRunning(live, model.leaderboard_ids)
          yield* sql`
            INSERT INTO models (id, workspace_id, name, model_name, description, creation_mode,
              selected_base_model_version_id, selected_base_model_resolution_id, auto_update_model,
              continuous_self_learning, hypertuning_parameters, fine_tune_schedule, next_fine_tune_at, gate_policy, extra,
              created_at, updated_at)
            VALUES (${model.id}, ${model.workspace_id}, ${model.name}, ${model.model_name}, ${model.description},
              ${model.creation_mode}, ${model.selected_base_model_version_id}, ${model.selected_base_model_resolution_id},
              ${model.auto_update_model}, ${model.continuous_self_learning}, ${model.hypertuning_parameters},
              ${model.fine_tune_schedule === null ? null : pg.json(model.fine_tune_schedule)},
              ${toDateOrNull(model.next_fine_tune_at)}, ${model.gate_policy === null ? null : pg.json(model.gate_policy)},
              ${pg.json(storableJson(model.extra))}, ${toDate(model.created_at)},
              ${toDate(model.updated_at)})`
          yield* assign(model.id, model.leaderboard_ids, live)
        })).pipe(Effect.catchTag("SqlError", Effect.die)),
      find: (id) => Effect.map(models(sql`m.id = ${id} AND m.deleted_at IS NULL`), (found) => Option.fromNullishOr(found[0])),
      list: (workspaceId, page) =>
        models(sql`m.workspace_id = ${workspaceId} AND m.deleted_at IS NULL
                   ORDER BY m.created_at, m.id LIMIT ${page.limit} OFFSET ${page.offset}`),
      update: (next) =>
        sql.withTransaction(Effect.gen(function*() {
          // the leaderboards first, then the model's row (which also holds off a concurrent update of it)
          const live = yield* lockLeaderboards(next.leaderboard_ids)
          const updated = yield* sql`
            UPDATE models SET name = ${next.name}, model_name = ${next.model_name}, description = ${next.description},
              creation_mode = ${next.creation_mode},
              selected_base_model_version_id = ${next.selected_base_model_version_id},
              selected_base_model_resolution_id = ${next.selected_base_model_resolution_id},
              auto_update_model = ${next.auto_update_model}, continuous_self_learning = ${next.continuous_self_learning},
              hypertuning_parameters = ${next.hypertuning_parameters},
              fine_tune_schedule = ${next.fine_tune_schedule === null ? null : pg.json(next.fine_tune_schedule)},
              -- an unchanged schedule keeps its stored next occurrence: the scheduler may have claimed the one read
              next_fine_tune_at = CASE
                WHEN next_fine_tune_at IS NOT NULL AND fine_tune_schedule IS NOT DISTINCT FROM
                  ${next.fine_tune_schedule === null ? null : pg.json(next.fine_tune_schedule)}::jsonb
                THEN next_fine_tune_at ELSE ${toDateOrNull(next.next_fine_tune_at)}::timestamptz END,
              gate_policy = ${next.gate_policy === null ? null : pg.json(next.gate_policy)},
              extra = ${pg.json(storableJson(next.extra))}, updated_at = ${toDate(next.updated_at)}
            WHERE id = ${next.id} AND deleted_at IS NULL RETURNING id`
          if (updated.length === 0) return false
          const stored = (yield* sql<{ leaderboard_id: string }>`
            SELECT leaderboard_id::text AS leaderboard_id FROM model_leaderboards
            WHERE model_id = ${next.id} ORDER BY position`).map((row) => row.leaderboard_id)
          if (sameIds(stored, next.leaderboard_ids)) return true
          yield* refuseRunning(live, next.leaderboard_ids.filter((id) => !stored.includes(id)))
          yield* assign(next.id, next.leaderboard_ids, live)
          return true
        })).pipe(Effect.catchTag("SqlError", Effect.die), Effect.ensuring(feed.changed("model", next.id))),
      softDelete: (id, now) =>
        sql`UPDATE models SET deleted_at = ${toDate(now)} WHERE id = ${id} AND deleted_at IS NULL RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie,
          Effect.ensuring(feed.changed("model", id))
        ),
      dueSchedules: (now) =>
        models(sql`m.deleted_at IS NULL AND m.next_fine_tune_at <= ${toDate(now)} ORDER BY m.next_fine_tune_at, m.id`),
      advanceSchedule: (id, from, next) =>
        sql`UPDATE models SET next_fine_tune_at = ${toDate(next)}
            WHERE id = ${id} AND deleted_at IS NULL
              -- the claim compares what was read, to the millisecond a DateTime holds
              AND date_trunc('milliseconds', next_fine_tune_at) = ${toDate(from)} RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        ),
      continuous: models(sql`m.deleted_at IS NULL AND m.continuous_self_learning ORDER BY m.created_at, m.id`)
    })
  })
)

export const ModelRepositoryPg = { layer }
