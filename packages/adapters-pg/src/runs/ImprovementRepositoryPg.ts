import { Effect, Layer, Option, Schema } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { Improvement, ImprovementRepository, inputKey } from "@podium/domain/runs"
import type { PromptInput } from "@podium/domain/inference"
import { NullableTimestamp, Timestamp, toDate } from "../Rows.ts"

const JobRow = Schema.Struct({ ...Improvement.fields, created_at: Timestamp, finished_at: NullableTimestamp })
const decodeJobs = Schema.decodeUnknownEffect(Schema.Array(JobRow))

/** Targets per INSERT when a job's targets are stored. */
const targetBatch = 5_000

const layer = Layer.effect(
  ImprovementRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const columns = sql`id::text AS id, leaderboard_id::text AS leaderboard_id, status, labeller, replace_references, total,
      improved, failed, version, error, created_at, finished_at`
    const jobs = (where: ReadonlyArray<Statement.Fragment>, order: Statement.Fragment = sql``) =>
      sql`SELECT ${columns} FROM improvement_jobs WHERE ${sql.and(where)} ${order}`.pipe(
        Effect.flatMap(decodeJobs),
        Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (row) => new Improvement(row)))
      )

    return ImprovementRepository.of({
      start: (job) =>
        Effect.gen(function*() {
          // the running job may end between the insert and the read: then insert again
          for (;;) {
            const inserted = yield* sql`
              INSERT INTO improvement_jobs (id, leaderboard_id, status, labeller, replace_references, created_at)
              VALUES (${job.id}, ${job.leaderboard_id}, 'running', ${job.labeller}, ${job.replace_references},
                ${toDate(job.created_at)})
              ON CONFLICT (leaderboard_id) WHERE status = 'running' DO NOTHING
              RETURNING id`
            if (inserted.length > 0) return job
            const running = yield* jobs([sql`leaderboard_id = ${job.leaderboard_id}`, sql`status = 'running'`])
            if (Option.isSome(running)) return running.value
          }
        }).pipe(Effect.orDie),
      prepare: (jobId, targets) =>
        sql.withTransaction(Effect.gen(function*() {
          const claimed = yield* sql`
            UPDATE improvement_jobs SET prepared = true, total = ${targets.length}
            WHERE id = ${jobId} AND NOT prepared AND status = 'running' RETURNING id`
          if (claimed.length === 0) return
          for (let at = 0; at < targets.length; at += targetBatch) {
            const batch = targets.slice(at, at + targetBatch)
            // arrays of text travel without nulls: a missing reference is marked apart
            yield* sql`
              INSERT INTO improvement_targets (job_id, idx, key, prompt, input, reference, answers)
              SELECT ${jobId}, u.idx, u.key, u.prompt, u.input, CASE WHEN u.has_reference THEN u.reference END, u.answers
              FROM unnest(${batch.map((t) => t.index)}::int[], ${batch.map((t) => t.key)}::text[],
                ${batch.map((t) => JSON.stringify(t.prompt))}::jsonb[], ${batch.map((t) => t.input)}::text[],
                ${batch.map((t) => t.reference ?? "")}::text[], ${batch.map((t) => t.reference !== null)}::boolean[],
                ${batch.map((t) => JSON.stringify(t.answers))}::jsonb[])
                AS u(idx, key, prompt, input, reference, has_reference, answers)`
          }
        })).pipe(Effect.orDie),
      find: (id) => jobs([sql`id = ${id}`]).pipe(Effect.orDie),
      latest: (leaderboardId) =>
        jobs([sql`leaderboard_id = ${leaderboardId}`], sql`ORDER BY created_at DESC, id DESC LIMIT 1`).pipe(Effect.orDie),
      pending: (jobId, after, size) =>
        sql<{ idx: number; key: string; prompt: PromptInput; input: string; reference: string | null; answers: Array<string> }>`
          SELECT idx, key, prompt, input, reference, answers FROM improvement_targets
          WHERE job_id = ${jobId} AND idx > ${after} AND NOT proposed ORDER BY idx LIMIT ${size}`.pipe(
          Effect.map((rows) =>
            rows.map((r) => ({ index: r.idx, key: r.key, prompt: r.prompt, input: r.input, reference: r.reference, answers: r.answers }))
          ),
          Effect.orDie
        ),
      propose: (jobId, index, reference) =>
        sql`
          WITH proposed AS (
            UPDATE improvement_targets SET proposed = true, proposal = ${reference}
            WHERE job_id = ${jobId} AND idx = ${index} AND NOT proposed RETURNING proposal
          )
          UPDATE improvement_jobs SET
            improved = improved + (SELECT count(*) FROM proposed WHERE proposal IS NOT NULL),
            failed = failed + (SELECT count(*) FROM proposed WHERE proposal IS NULL)
          WHERE id = ${jobId}`.pipe(Effect.asVoid, Effect.orDie),
      publish: (jobId, now) =>
        sql.withTransaction(Effect.gen(function*() {
          const [job] = yield* sql<{ leaderboard_id: string; labeller: string; improved: number }>`
            SELECT leaderboard_id::text AS leaderboard_id, labeller, improved FROM improvement_jobs
            WHERE id = ${jobId} AND status = 'running' FOR UPDATE`
          if (job === undefined) return
          const [latest] = yield* sql<{ version: number | null }>`
            SELECT max(version) AS version FROM improvement_jobs WHERE leaderboard_id = ${job.leaderboard_id}`
          const version = job.improved === 0 ? null : (latest?.version ?? 0) + 1
          if (version !== null) {
            yield* sql`
              INSERT INTO improved_references (leaderboard_id, key_hash, key, reference, model, version, job_id, created_at)
              SELECT ${job.leaderboard_id}, md5(t.key), t.key, t.proposal, ${job.labeller}, ${version}, ${jobId}, ${toDate(now)}
              FROM improvement_targets t WHERE t.job_id = ${jobId} AND t.proposal IS NOT NULL
              ON CONFLICT (leaderboard_id, key_hash) DO UPDATE SET key = EXCLUDED.key, reference = EXCLUDED.reference,
                model = EXCLUDED.model, version = EXCLUDED.version, job_id = EXCLUDED.job_id, created_at = EXCLUDED.created_at`
          }
          yield* sql`UPDATE improvement_jobs SET status = 'succeeded', version = ${version}, finished_at = ${toDate(now)}
                     WHERE id = ${jobId}`
        })).pipe(Effect.orDie),
      fail: (jobId, error, now) =>
        sql`UPDATE improvement_jobs SET status = 'failed', error = ${error}, finished_at = ${toDate(now)}
            WHERE id = ${jobId} AND status = 'running'`.pipe(Effect.asVoid, Effect.orDie),
      references: (leaderboardId, keys) =>
        (keys.length === 0
          ? Effect.succeed<ReadonlyArray<{ key: string; reference: string; version: number }>>([])
          : sql<{ key: string; reference: string; version: number }>`
              SELECT key, reference, version FROM improved_references
              WHERE leaderboard_id = ${leaderboardId}
                AND key_hash IN (SELECT md5(k) FROM unnest(${keys}::text[]) AS k)`).pipe(
          Effect.map((rows) => new Map(rows.map((r) => [r.key, { reference: r.reference, version: r.version }]))),
          Effect.orDie
        ),
      latestAnswers: (leaderboardId) =>
        sql<{ prompt: PromptInput; answers: Array<string> }>`
          SELECT r.prompt, array_agg(c.output ORDER BY c.candidate_id) AS answers
          FROM run_rows r JOIN run_cells c ON c.run_id = r.run_id AND c.row_idx = r.idx
          WHERE r.run_id = (SELECT id FROM runs WHERE leaderboard_id = ${leaderboardId} AND status = 'succeeded'
                            ORDER BY created_at DESC, id DESC LIMIT 1)
            AND c.output IS NOT NULL
          GROUP BY r.idx, r.prompt`.pipe(
          Effect.map((rows) => new Map(rows.map((r) => [inputKey(r), r.answers]))),
          Effect.orDie
        )
    })
  })
)

export const ImprovementRepositoryPg = { layer }
