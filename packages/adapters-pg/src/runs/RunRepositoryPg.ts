import { PgClient } from "@effect/sql-pg"
import { Cause, DateTime, Deferred, Effect, Exit, Layer, Option, Queue, Schema } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import {
  CandidateResult,
  type Cell,
  type CellVerdict,
  Run,
  RunDataset,
  type RunEnd,
  RunInProgress,
  RunProgress,
  RunRepository,
  type RunStatus
} from "@podium/domain/runs"
import { storableText } from "@podium/domain/shared"
import { NullableTimestamp, Timestamp, toDate } from "../Rows.ts"

const RunRow = Schema.Struct({
  ...Run.fields,
  progress: RunProgress,
  results: Schema.Array(CandidateResult),
  dataset: Schema.NullOr(RunDataset),
  created_at: Timestamp,
  started_at: NullableTimestamp,
  finished_at: NullableTimestamp
})
const decodeRuns = Schema.decodeUnknownEffect(Schema.Array(RunRow))

interface PendingCell {
  readonly runId: string
  readonly cell: Cell
  readonly now: DateTime.Utc
  readonly done: Deferred.Deferred<void>
}

const storable = (text: string | null) => text === null ? null : storableText(text)

/** runs.serving_decision holds the decision with the pairwise comparisons it rested on (`pairwise`), or null. */
const servingDecision = (end: RunEnd) =>
  end.serving_decision === undefined || end.serving_decision === null
    ? null
    : { ...end.serving_decision, pairwise: end.pairwise ?? [] }

/** Most cells one statement writes. */
const cellGroup = 256

/** Rows per INSERT when a run's rows are stored. */
const rowBatch = 5_000

const layer = Layer.effect(
  RunRepository,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* PgClient.PgClient

    /** An active run's progress is counted from its cells; an ended run's was recorded when it ended. */
    const columns = sql`r.id::text AS id, r.leaderboard_id::text AS leaderboard_id, r.workspace_id::text AS workspace_id,
      r.status, r.run_source, r.eval_type, r.model_ids::text[] AS model_ids, r.improve_dataset,
      CASE WHEN r.sample_size IS NOT NULL
        THEN jsonb_build_object('size', r.sample_size, 'seed', r.sample_seed) END AS sample,
      COALESCE(r.progress, (
        SELECT jsonb_build_object(
          'total', COALESCE((r.dataset ->> 'rows')::int, 0) * cardinality(r.model_ids),
          'completed', count(*)::int,
          'failed', (count(*) FILTER (WHERE c.error IS NOT NULL))::int)
        FROM run_cells c WHERE c.run_id = r.id)) AS progress,
      r.results, r.winner_leaderboard_model_id::text AS winner_leaderboard_model_id,
      r.serving_decision -> 'pairwise' AS pairwise, r.serving_decision - 'pairwise' AS serving_decision, r.dataset, r.error,
      r.created_at, r.started_at, r.finished_at`

    const runs = (where: ReadonlyArray<Statement.Fragment>, order: Statement.Fragment = sql``) =>
      sql`SELECT ${columns} FROM runs r WHERE ${sql.and(where)} ${order}`.pipe(
        Effect.flatMap(decodeRuns),
        Effect.map((rows) => rows.map((row) => new Run(row)))
      )

    /**
     * Cells are written in groups (group commit): each `saveCell` returns once its group is committed,
     * so a cell that was answered is stored before its slot asks the next row, as if written alone,
     * at one statement and one commit for all the cells that arrived meanwhile. An ended (cancelled)
     * run takes no more cells; a repeated cell changes nothing.
     */
    const cells = yield* Queue.unbounded<PendingCell>()
    const writeCells = (group: ReadonlyArray<PendingCell>) =>
      sql`
        INSERT INTO run_cells (run_id, candidate_id, row_idx, output, verdict, reason, error, latency_ms, cost_usd, created_at)
        SELECT u.run_id, u.candidate_id, u.row_idx, u.output, u.verdict, u.reason, u.error, u.latency_ms, u.cost_usd, u.created_at
        FROM jsonb_to_recordset(${pg.json(group.map(({ cell, now, runId }) => ({
          run_id: runId,
          candidate_id: cell.candidate_id,
          row_idx: cell.row_index,
          output: storable(cell.output),
          verdict: cell.verdict,
          reason: storable(cell.reason),
          error: storable(cell.error),
          latency_ms: cell.latency_ms,
          cost_usd: cell.cost_usd,
          created_at: DateTime.formatIso(now)
        })))}) AS u(run_id uuid, candidate_id uuid, row_idx integer, output text, verdict text, reason text, error text,
          latency_ms double precision, cost_usd double precision, created_at timestamptz)
        WHERE EXISTS (SELECT 1 FROM runs r WHERE r.id = u.run_id AND r.status = 'running')
        ON CONFLICT DO NOTHING`
    yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
      const group = yield* Queue.takeBetween(cells, 1, cellGroup)
      const written = yield* Effect.exit(writeCells(group))
      // the writers hear how their group went: a failure is theirs to retry (the step is run again)
      for (const { done } of group) {
        yield* Exit.isSuccess(written) ? Deferred.succeed(done, undefined) : Deferred.die(done, Cause.squash(written.cause))
      }
    })))

    const find = (id: string) =>
      runs([sql`r.id = ${id}`]).pipe(Effect.map((found) => Option.fromNullishOr(found[0])), Effect.orDie)

    return RunRepository.of({
      create: (run) =>
        sql.withTransaction(Effect.gen(function*() {
          const [leaderboard] = yield* sql<{ status: string }>`
            SELECT status FROM leaderboards WHERE id = ${run.leaderboard_id} FOR UPDATE`
          const inserted = yield* sql`
            INSERT INTO runs (id, leaderboard_id, workspace_id, status, run_source, eval_type, model_ids, improve_dataset,
              sample_size, sample_seed, prior_status, created_at)
            VALUES (${run.id}, ${run.leaderboard_id}, ${run.workspace_id}, 'queued', ${run.run_source}, ${run.eval_type},
              ${run.model_ids}::uuid[], ${run.improve_dataset}, ${run.sample?.size ?? null}, ${run.sample?.seed ?? null},
              ${leaderboard?.status === "running" || leaderboard === undefined ? "active" : leaderboard.status},
              ${toDate(run.created_at)})
            ON CONFLICT (leaderboard_id) WHERE status IN ('queued', 'running') DO NOTHING
            RETURNING id`
          if (inserted.length === 0) {
            const [active] = yield* sql<{ id: string }>`
              SELECT id::text AS id FROM runs WHERE leaderboard_id = ${run.leaderboard_id} AND status IN ('queued', 'running')`
            return yield* new RunInProgress({ leaderboard_id: run.leaderboard_id, run_id: active?.id ?? "" })
          }
          yield* sql`UPDATE leaderboards SET status = 'running', version = version + 1 WHERE id = ${run.leaderboard_id}`
        })).pipe(Effect.catchTag("SqlError", Effect.die)),
      queuedBefore: (cutoff) =>
        runs([sql`r.status = 'queued'`, sql`r.created_at < ${toDate(cutoff)}`], sql`ORDER BY r.created_at`).pipe(Effect.orDie),
      status: (id) =>
        sql<{ status: RunStatus }>`SELECT status FROM runs WHERE id = ${id}`.pipe(
          Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (row) => row.status)),
          Effect.orDie
        ),
      find,
      list: (leaderboardId, page) =>
        runs(
          [sql`r.leaderboard_id = ${leaderboardId}`],
          sql`ORDER BY r.created_at DESC, r.id DESC LIMIT ${page.limit} OFFSET ${page.offset}`
        ).pipe(Effect.orDie),
      start: (runId, dataset, rows, now) =>
        sql.withTransaction(Effect.gen(function*() {
          const started = yield* sql`
            UPDATE runs SET status = 'running', dataset = ${pg.json(dataset)}, started_at = ${toDate(now)}
            WHERE id = ${runId} AND status = 'queued' RETURNING id`
          if (started.length === 0) return false
          for (let at = 0; at < rows.length; at += rowBatch) {
            const batch = rows.slice(at, at + rowBatch)
            // arrays of text travel without nulls: a missing reference is marked apart
            yield* sql`
              INSERT INTO run_rows (run_id, idx, prompt, input, reference)
              SELECT ${runId}, u.idx, u.prompt, u.input, CASE WHEN u.has_reference THEN u.reference END
              FROM unnest(${batch.map((r) => r.index)}::int[], ${batch.map((r) => JSON.stringify(r.prompt))}::jsonb[],
                ${batch.map((r) => r.input)}::text[], ${batch.map((r) => r.reference ?? "")}::text[],
                ${batch.map((r) => r.reference !== null)}::boolean[])
                AS u(idx, prompt, input, reference, has_reference)`
          }
          return true
        })).pipe(Effect.orDie),
      pendingRows: (runId, candidateId, from, to) =>
        sql<{ idx: number; prompt: Record<string, unknown>; input: string; reference: string | null }>`
          SELECT r.idx, r.prompt, r.input, r.reference FROM run_rows r
          WHERE r.run_id = ${runId} AND r.idx >= ${from} AND r.idx < ${to}
            AND NOT EXISTS (SELECT 1 FROM run_cells c
                            WHERE c.run_id = r.run_id AND c.candidate_id = ${candidateId} AND c.row_idx = r.idx)
          ORDER BY r.idx`.pipe(
          Effect.map((rows) => rows.map((r) => ({ index: r.idx, prompt: r.prompt, input: r.input, reference: r.reference }))),
          Effect.orDie
        ),
      saveCell: (runId, cell, now) =>
        Effect.flatMap(Deferred.make<void>(), (done) =>
          Effect.andThen(Queue.offer(cells, { runId, cell, now, done }), Deferred.await(done))),
      tallies: (runId) =>
        sql<{
          candidate_id: string
          correct: number
          total: number
          errors: number
          latency_ms_p50: number | null
          latency_ms_p95: number | null
          total_cost_usd: number | null
        }>`
          SELECT candidate_id::text AS candidate_id,
            (count(*) FILTER (WHERE verdict = 'correct'))::int AS correct,
            (count(*) FILTER (WHERE verdict IS NOT NULL))::int AS total,
            (count(*) FILTER (WHERE error IS NOT NULL))::int AS errors,
            percentile_disc(0.5) WITHIN GROUP (ORDER BY latency_ms) FILTER (WHERE output IS NOT NULL) AS latency_ms_p50,
            percentile_disc(0.95) WITHIN GROUP (ORDER BY latency_ms) FILTER (WHERE output IS NOT NULL) AS latency_ms_p95,
            -- summed exactly (numeric, not float: 0.01 + 0.02 + 0.02 is 0.05) and made a float once
            round(sum(cost_usd::numeric), 12)::float8 AS total_cost_usd
          FROM run_cells WHERE run_id = ${runId} GROUP BY candidate_id ORDER BY candidate_id`.pipe(Effect.orDie),
      verdicts: (runId) =>
        // one row per candidate, its cells packed in row order (a 10,000-row run of 5 candidates: 5 rows, not 50,000):
        // c correct, i incorrect, n no verdict (none, or an error), then a answered or - not
        sql<{ candidate_id: string; rows: ReadonlyArray<number>; codes: string }>`
          SELECT candidate_id::text AS candidate_id, array_agg(row_idx ORDER BY row_idx) AS rows,
            string_agg(
              CASE WHEN error IS NOT NULL OR verdict IS NULL THEN 'n' WHEN verdict = 'correct' THEN 'c' ELSE 'i' END ||
              CASE WHEN output IS NOT NULL THEN 'a' ELSE '-' END, '' ORDER BY row_idx) AS codes
          FROM run_cells WHERE run_id = ${runId} GROUP BY candidate_id ORDER BY candidate_id`.pipe(
          Effect.map((groups) =>
            groups.flatMap(({ candidate_id, codes, rows }) =>
              rows.map((row_index, i): CellVerdict => {
                const code = codes[2 * i]
                return {
                  row_index,
                  candidate_id,
                  verdict: code === "c" ? "correct" : code === "i" ? "incorrect" : null,
                  answered: codes[2 * i + 1] === "a"
                }
              })
            )
          ),
          Effect.orDie
        ),
      end: (runId, end, now) =>
        sql.withTransaction(Effect.gen(function*() {
          // the leaderboard first, as `create` takes them: two transactions never wait on each other crosswise
          yield* sql`SELECT 1 FROM leaderboards WHERE id = (SELECT leaderboard_id FROM runs WHERE id = ${runId}) FOR UPDATE`
          const decision = servingDecision(end)
          const ended = yield* sql<{ leaderboard_id: string; prior_status: string }>`
            UPDATE runs r SET status = ${end.status}, results = ${pg.json(end.results)},
              winner_leaderboard_model_id = ${end.winner}, error = ${end.error}, finished_at = ${toDate(now)},
              serving_decision = ${decision === null ? null : pg.json(decision)},
              progress = (
                SELECT jsonb_build_object(
                  'total', COALESCE((r.dataset ->> 'rows')::int, 0) * cardinality(r.model_ids),
                  'completed', count(*)::int,
                  'failed', (count(*) FILTER (WHERE c.error IS NOT NULL))::int)
                FROM run_cells c WHERE c.run_id = r.id)
            WHERE r.id = ${runId} AND r.status IN ('queued', 'running')
            RETURNING r.leaderboard_id::text AS leaderboard_id, r.prior_status`
          const [run] = ended
          if (run === undefined) return false
          yield* sql`
            UPDATE leaderboards SET status = ${run.prior_status}, version = version + 1
            WHERE id = ${run.leaderboard_id} AND status = 'running'`
          // the run's decision serves only if it did end as succeeded (a cancel that came first keeps the old one)
          if (end.status === "succeeded" && end.serving !== undefined && end.serving !== null) {
            yield* sql`
              UPDATE leaderboards SET ranking_winner_id = ${end.serving}
              WHERE id = ${run.leaderboard_id} AND ranking_winner_id IS DISTINCT FROM ${end.serving}::uuid`
          }
          return true
        })).pipe(Effect.orDie),
      results: (runId, page) =>
        sql<{
          idx: number
          input: string
          reference: string | null
          cells: ReadonlyArray<{
            candidate_id: string
            output: string | null
            verdict: "correct" | "incorrect" | null
            reason: string | null
            error: string | null
            latency_ms: number | null
            cost_usd: number | null
          }>
        }>`
          SELECT r.idx, r.input, r.reference, COALESCE((
            SELECT json_agg(json_build_object(
              'candidate_id', c.candidate_id, 'output', c.output, 'verdict', c.verdict, 'reason', c.reason,
              'error', c.error, 'latency_ms', c.latency_ms, 'cost_usd', c.cost_usd) ORDER BY c.candidate_id)
            FROM run_cells c WHERE c.run_id = r.run_id AND c.row_idx = r.idx), '[]'::json) AS cells
          FROM run_rows r WHERE r.run_id = ${runId}
          ORDER BY r.idx LIMIT ${page.limit} OFFSET ${page.offset}`.pipe(
          Effect.map((rows) =>
            rows.map((r) => ({
              index: r.idx,
              input: r.input,
              reference: r.reference,
              cells: r.cells.map(({ candidate_id, ...cell }) => ({ ...cell, candidate_id, row_index: r.idx }))
            }))
          ),
          Effect.orDie
        )
    })
  })
)

export const RunRepositoryPg = { layer }
