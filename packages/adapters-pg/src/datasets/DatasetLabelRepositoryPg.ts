import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { DatasetLabelRepository, LabelJob } from "@podium/domain/datasets"
import { NullableTimestamp, Timestamp, toDate } from "../Rows.ts"
// publishing a version takes turns with consolidations: the same lock
import { lockKey } from "./DatasetRepositoryPg.ts"

const JobRow = Schema.Struct({ ...LabelJob.fields, created_at: Timestamp, finished_at: NullableTimestamp })
const decodeJobs = Schema.decodeUnknownEffect(Schema.Array(JobRow))

const layer = Layer.effect(
  DatasetLabelRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const columns = sql`id::text AS id, leaderboard_id::text AS leaderboard_id, base_version, labeller, status, total, labelled,
      failed, version, error, created_at, finished_at`
    const jobs = (where: ReadonlyArray<Statement.Fragment>, order: Statement.Fragment = sql``) =>
      sql`SELECT ${columns} FROM dataset_label_jobs WHERE ${sql.and(where)} ${order}`.pipe(
        Effect.flatMap(decodeJobs),
        Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (row) => new LabelJob(row)))
      )

    const find = (jobId: string) => jobs([sql`id = ${jobId}`]).pipe(Effect.orDie)

    return DatasetLabelRepository.of({
      start: (job) =>
        Effect.gen(function*() {
          // the running job may finish between the insert and the read: then insert again
          for (;;) {
            const inserted = yield* sql`
              INSERT INTO dataset_label_jobs (id, leaderboard_id, base_version, labeller, status, total, created_at)
              VALUES (${job.id}, ${job.leaderboard_id}, ${job.base_version}, ${job.labeller}, 'running', ${job.total},
                ${toDate(job.created_at)})
              ON CONFLICT (leaderboard_id) WHERE status = 'running' DO NOTHING
              RETURNING id`
            if (inserted.length > 0) return job
            const running = yield* jobs([sql`leaderboard_id = ${job.leaderboard_id}`, sql`status = 'running'`])
            if (Option.isSome(running)) return running.value
          }
        }).pipe(Effect.orDie),
      find,
      latest: (leaderboardId) =>
        jobs([sql`leaderboard_id = ${leaderboardId}`], sql`ORDER BY created_at DESC, id DESC LIMIT 1`).pipe(Effect.orDie),
      countUnlabelled: (leaderboardId, version) =>
        sql<{ n: number }>`
          SELECT count(*)::int AS n FROM dataset_rows r
          JOIN dataset_versions v ON v.leaderboard_id = r.leaderboard_id AND v.version = ${version}
          WHERE r.leaderboard_id = ${leaderboardId} AND r.version <= ${version} AND NOT r.dropped
            AND (v.floor_id IS NULL OR r.id >= v.floor_id) AND r.reference IS NULL
            AND NOT EXISTS (SELECT 1 FROM dataset_labels l
                            WHERE l.leaderboard_id = r.leaderboard_id AND l.row_id = r.id AND l.version IS NOT NULL)`.pipe(
          Effect.map(([row]) => row?.n ?? 0),
          Effect.orDie
        ),
      unlabelled: (job, afterId, size) =>
        sql<{ id: string; data: string }>`
          SELECT r.id::text AS id, r.data::text AS data FROM dataset_rows r
          JOIN dataset_versions v ON v.leaderboard_id = r.leaderboard_id AND v.version = ${job.base_version}
          WHERE r.leaderboard_id = ${job.leaderboard_id} AND r.version <= ${job.base_version} AND NOT r.dropped
            AND (v.floor_id IS NULL OR r.id >= v.floor_id) AND r.reference IS NULL
            AND (${afterId}::uuid IS NULL OR r.id > ${afterId}::uuid)
            AND NOT EXISTS (SELECT 1 FROM dataset_labels l
                            WHERE l.leaderboard_id = r.leaderboard_id AND l.row_id = r.id
                              AND (l.version IS NOT NULL OR l.job_id = ${job.id}))
          ORDER BY r.id LIMIT ${size}`.pipe(
          Effect.map((rows) => rows.map((row) => ({ id: row.id, data: JSON.parse(row.data) as Record<string, unknown> }))),
          Effect.orDie
        ),
      saveLabel: (job, rowId, reference, now) =>
        sql`
          WITH saved AS (
            INSERT INTO dataset_labels (leaderboard_id, row_id, job_id, version, reference, model, created_at)
            VALUES (${job.leaderboard_id}, ${rowId}, ${job.id}, NULL, ${reference}, ${job.labeller}, ${toDate(now)})
            ON CONFLICT (leaderboard_id, row_id) DO UPDATE
              SET job_id = EXCLUDED.job_id, reference = EXCLUDED.reference, model = EXCLUDED.model,
                  created_at = EXCLUDED.created_at
              -- an unpublished label of an earlier job is taken over; a published one is never replaced
              WHERE dataset_labels.version IS NULL AND dataset_labels.job_id <> EXCLUDED.job_id
            RETURNING 1
          )
          UPDATE dataset_label_jobs SET labelled = labelled + (SELECT count(*) FROM saved) WHERE id = ${job.id}`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      countFailure: (job) =>
        sql`UPDATE dataset_label_jobs SET failed = failed + 1 WHERE id = ${job.id}`.pipe(Effect.asVoid, Effect.orDie),
      publish: (job, now) =>
        sql.withTransaction(Effect.gen(function*() {
          const lb = job.leaderboard_id
          yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${lockKey(lb)}, 0))`
          const current = yield* find(job.id)
          if (Option.isSome(current) && current.value.status !== "running") return Option.fromNullishOr(current.value.version)
          const [latest] = yield* sql<{ version: number; row_count: number; total_rows: number; floor_id: string | null }>`
            SELECT version, row_count, total_rows, floor_id::text AS floor_id FROM dataset_versions
            WHERE leaderboard_id = ${lb} ORDER BY version DESC LIMIT 1`
          const [counted] = yield* sql<{ n: number }>`
            SELECT count(*)::int AS n FROM dataset_labels WHERE leaderboard_id = ${lb} AND job_id = ${job.id} AND version IS NULL`
          const n = counted?.n ?? 0
          const version = n === 0 || latest === undefined ? null : latest.version + 1
          if (version !== null) {
            yield* sql`
              INSERT INTO dataset_versions (leaderboard_id, version, row_count, total_rows, added_rows, dropped_duplicates,
                labelled_rows, trigger, floor_id, sha256, created_at)
              VALUES (${lb}, ${version}, ${latest!.row_count}, ${latest!.total_rows}, 0, 0, ${n}, 'auto_labels',
                ${latest!.floor_id}, NULL, ${toDate(now)})`
            yield* sql`UPDATE dataset_labels SET version = ${version}
                       WHERE leaderboard_id = ${lb} AND job_id = ${job.id} AND version IS NULL`
            yield* sql`UPDATE datasets SET latest_version = ${version} WHERE leaderboard_id = ${lb}`
          }
          yield* sql`UPDATE dataset_label_jobs SET status = 'succeeded', version = ${version}, finished_at = ${toDate(now)}
                     WHERE id = ${job.id}`
          return Option.fromNullishOr(version)
        })).pipe(Effect.orDie),
      fail: (job, error, now) =>
        sql`UPDATE dataset_label_jobs SET status = 'failed', error = ${error}, finished_at = ${toDate(now)}
            WHERE id = ${job.id} AND status = 'running'`.pipe(Effect.asVoid, Effect.orDie)
    })
  })
)

export const DatasetLabelRepositoryPg = { layer }
