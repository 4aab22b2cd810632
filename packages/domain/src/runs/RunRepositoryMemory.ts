import { Data, DateTime, Effect, Layer, Option, SynchronizedRef } from "effect"
import { Leaderboard, type LeaderboardId, LeaderboardRepository, type LeaderboardStatus } from "../leaderboards/index.ts"
import { isStorableText, storableText, sumUsd } from "../shared/index.ts"
import { percentile } from "./Ranking.ts"
import { type Cell, isActive, Run, type RunProgress, type RunRow } from "./Run.ts"
import { RunInProgress } from "./RunErrors.ts"
import { type CellTally, type ResultRow, RunRepository } from "./RunRepository.ts"

interface StoredRun {
  /** As last written; its `progress` counts only once the run has ended. */
  readonly run: Run
  /** The leaderboard's status before the run made it `running`. */
  readonly prior_status: LeaderboardStatus
  /** In index order. */
  readonly rows: ReadonlyArray<RunRow>
  /** By `cellKey`. */
  readonly cells: ReadonlyMap<string, Cell>
}

type Tables = ReadonlyMap<string, StoredRun>

/** What a Postgres constraint refuses: a defect there, so one here. */
class ConstraintViolated extends Data.Error<{ readonly constraint: string }> {}

/** Text Postgres refuses (U+0000 anywhere, lone surrogates inside jsonb): a defect there, so one here. */
class UnstorableText extends Data.Error<{ readonly column: string }> {}

const cellKey = (candidateId: string, rowIndex: number) => `${candidateId}/${rowIndex}`

const byText = (a: string, b: string) => a < b ? -1 : a > b ? 1 : 0

/** A `text` column: U+0000 is refused; a lone surrogate reaches the database as U+FFFD. */
const text = (column: string, value: string) =>
  value.includes("\u0000") ? Effect.die(new UnstorableText({ column })) : Effect.succeed(storableText(value))

const nullableText = (column: string, value: string | null) =>
  value === null ? Effect.succeed(null) : text(column, value)

const storableJson = (value: unknown): boolean =>
  typeof value === "string"
    ? isStorableText(value)
    : Array.isArray(value)
    ? value.every(storableJson)
    : typeof value === "object" && value !== null
    ? Object.entries(value).every(([key, inner]) => isStorableText(key) && storableJson(inner))
    : true

/** A `jsonb` column: refuses U+0000 and lone surrogates; gives back what JSON keeps. */
const json = <A>(column: string, value: A): Effect.Effect<A> =>
  storableJson(value) ? Effect.succeed(JSON.parse(JSON.stringify(value)) as A) : Effect.die(new UnstorableText({ column }))

/** Cells over rows × candidates, counted from the cells stored (any candidate's), as the Postgres adapter counts them. */
const progressOf = (stored: StoredRun): RunProgress => {
  const cells = [...stored.cells.values()]
  return {
    total: (stored.run.dataset?.rows ?? 0) * stored.run.model_ids.length,
    completed: cells.length,
    failed: cells.filter((c) => c.error !== null).length
  }
}

/** An active run's progress is counted now; an ended run's is the one recorded when it ended. */
const runOf = (stored: StoredRun): Run =>
  isActive(stored.run.status) ? new Run({ ...stored.run, progress: progressOf(stored) }) : stored.run

const newestFirst = (a: StoredRun, b: StoredRun) =>
  DateTime.toEpochMillis(b.run.created_at) - DateTime.toEpochMillis(a.run.created_at) || byText(b.run.id, a.run.id)

const tallyOf = (candidateId: string, cells: ReadonlyArray<Cell>): CellTally => {
  const latencies = cells.flatMap((c) => c.output !== null && c.latency_ms !== null ? [c.latency_ms] : [])
  const costs = cells.flatMap((c) => c.cost_usd === null ? [] : [c.cost_usd])
  return {
    candidate_id: candidateId,
    correct: cells.filter((c) => c.verdict === "correct").length,
    total: cells.filter((c) => c.verdict !== null).length,
    errors: cells.filter((c) => c.error !== null).length,
    latency_ms_p50: percentile(latencies, 50),
    latency_ms_p95: percentile(latencies, 95),
    total_cost_usd: costs.length === 0 ? null : sumUsd(costs)
  }
}

/**
 * RunRepository in memory, with the Postgres adapter's semantics. The leaderboard's status is read
 * and written through the LeaderboardRepository it is given, each write at the next version (so a
 * client's write computed before it loses), under the same lock as the run's own write.
 */
const layer = Layer.effect(
  RunRepository,
  Effect.gen(function*() {
    const leaderboards = yield* LeaderboardRepository
    const ref = yield* SynchronizedRef.make<Tables>(new Map())

    // Each operation yields first, as a round trip to the database would, so that concurrent use
    // cases interleave (and lose races) here as they do against Postgres.
    const read = <A>(f: (tables: Tables) => A) => Effect.andThen(Effect.yieldNow, Effect.map(SynchronizedRef.get(ref), f))
    /** Applies `f` under the lock; a failure or defect of its effect leaves the tables as they were. */
    const write = <A, E>(f: (tables: Tables) => Effect.Effect<readonly [A, Tables], E>) =>
      Effect.andThen(Effect.yieldNow, SynchronizedRef.modifyEffect(ref, f))

    /**
     * Sets the leaderboard's status to `next(current)` (null: leaves it) at the next version, read
     * again after a lost race; the status it had, or none for no live leaderboard.
     */
    const setStatus = (id: LeaderboardId, next: (current: LeaderboardStatus) => LeaderboardStatus | null) =>
      Effect.gen(function*() {
        while (true) {
          const found = yield* leaderboards.find(id)
          if (Option.isNone(found)) return Option.none<LeaderboardStatus>()
          const leaderboard = found.value
          const status = next(leaderboard.status)
          if (status === null) return Option.some(leaderboard.status)
          const written = yield* leaderboards.update(new Leaderboard({ ...leaderboard, status, version: leaderboard.version + 1 }))
          if (written) return Option.some(leaderboard.status)
        }
      })

    return RunRepository.of({
      create: (run) =>
        write((tables) =>
          Effect.gen(function*() {
            const active = [...tables.values()].find((s) => s.run.leaderboard_id === run.leaderboard_id && isActive(s.run.status))
            if (active !== undefined) {
              return yield* new RunInProgress({ leaderboard_id: run.leaderboard_id, run_id: active.run.id })
            }
            if (tables.has(run.id)) return yield* Effect.die(new ConstraintViolated({ constraint: "runs_pkey" }))
            const prior = yield* setStatus(run.leaderboard_id, () => "running")
            if (Option.isNone(prior)) return yield* Effect.die(new ConstraintViolated({ constraint: "runs_leaderboard_id_fkey" }))
            const stored: StoredRun = {
              run: new Run({
                ...run,
                status: "queued",
                progress: { total: 0, completed: 0, failed: 0 },
                results: [],
                winner_leaderboard_model_id: null,
                dataset: null,
                error: null,
                started_at: null,
                finished_at: null
              }),
              prior_status: prior.value === "running" ? "active" : prior.value,
              rows: [],
              cells: new Map()
            }
            return [undefined, new Map(tables).set(run.id, stored)] as const
          })
        ),
      queuedBefore: (cutoff) =>
        read((tables) =>
          [...tables.values()]
            .filter((stored) => stored.run.status === "queued" && DateTime.isLessThan(stored.run.created_at, cutoff))
            .map(runOf)
        ),
      status: (id) => read((tables) => Option.map(Option.fromUndefinedOr(tables.get(id)), (stored) => stored.run.status)),
      find: (id) => read((tables) => Option.map(Option.fromUndefinedOr(tables.get(id)), runOf)),
      list: (leaderboardId, page) =>
        read((tables) =>
          [...tables.values()]
            .filter((s) => s.run.leaderboard_id === leaderboardId)
            .sort(newestFirst)
            .slice(page.offset, page.offset + page.limit)
            .map(runOf)
        ),
      start: (runId, dataset, rows, now) =>
        write((tables) =>
          Effect.gen(function*() {
            const stored = tables.get(runId)
            if (stored === undefined || stored.run.status !== "queued") return [false, tables] as const
            const indexes = new Set(rows.map((r) => r.index))
            if (indexes.size !== rows.length) return yield* Effect.die(new ConstraintViolated({ constraint: "run_rows_pkey" }))
            const saved = yield* Effect.forEach(rows, (row) =>
              Effect.gen(function*() {
                return {
                  index: row.index,
                  prompt: yield* json("run_rows.prompt", row.prompt),
                  input: yield* text("run_rows.input", row.input),
                  reference: yield* nullableText("run_rows.reference", row.reference)
                }
              }))
            const run = new Run({ ...stored.run, status: "running", dataset: yield* json("runs.dataset", dataset), started_at: now })
            const next: StoredRun = { ...stored, run, rows: saved.sort((a, b) => a.index - b.index) }
            return [true, new Map(tables).set(runId, next)] as const
          })
        ),
      pendingRows: (runId, candidateId, from, to) =>
        read((tables) => {
          const stored = tables.get(runId)
          if (stored === undefined) return []
          return stored.rows.filter((r) => r.index >= from && r.index < to && !stored.cells.has(cellKey(candidateId, r.index)))
        }),
      saveCell: (runId, cell) =>
        write((tables) =>
          Effect.gen(function*() {
            const saved: Cell = {
              row_index: cell.row_index,
              candidate_id: cell.candidate_id,
              output: cell.output === null ? null : storableText(cell.output),
              verdict: cell.verdict,
              reason: cell.reason === null ? null : storableText(cell.reason),
              error: cell.error === null ? null : storableText(cell.error),
              latency_ms: cell.latency_ms,
              cost_usd: cell.cost_usd
            }
            const stored = tables.get(runId)
            if (stored === undefined) return yield* Effect.die(new ConstraintViolated({ constraint: "run_cells_run_id_fkey" }))
            const key = cellKey(cell.candidate_id, cell.row_index)
            // an ended (cancelled) run takes no more cells
            if (stored.cells.has(key) || stored.run.status !== "running") return [undefined, tables] as const
            return [undefined, new Map(tables).set(runId, { ...stored, cells: new Map(stored.cells).set(key, saved) })] as const
          })
        ),
      tallies: (runId) =>
        read((tables) => {
          const byCandidate = new Map<string, Array<Cell>>()
          for (const cell of tables.get(runId)?.cells.values() ?? []) {
            const cells = byCandidate.get(cell.candidate_id) ?? []
            cells.push(cell)
            byCandidate.set(cell.candidate_id, cells)
          }
          return [...byCandidate].sort(([a], [b]) => byText(a, b)).map(([candidateId, cells]) => tallyOf(candidateId, cells))
        }),
      verdicts: (runId) =>
        read((tables) =>
          [...tables.get(runId)?.cells.values() ?? []].map((cell) => ({
            row_index: cell.row_index,
            candidate_id: cell.candidate_id,
            verdict: cell.error === null ? cell.verdict : null,
            answered: cell.output !== null
          }))
        ),
      end: (runId, end, now) =>
        write((tables) =>
          Effect.gen(function*() {
            const stored = tables.get(runId)
            if (stored === undefined || !isActive(stored.run.status)) return [false, tables] as const
            const run = new Run({
              ...stored.run,
              status: end.status,
              results: yield* json("runs.results", end.results),
              winner_leaderboard_model_id: end.winner,
              pairwise: end.pairwise ?? null,
              serving_decision: end.serving_decision === undefined || end.serving_decision === null
                ? null
                : yield* json("runs.serving_decision", end.serving_decision),
              error: yield* nullableText("runs.error", end.error),
              finished_at: now,
              progress: progressOf(stored)
            })
            // a client that changed the status meanwhile keeps its change
            yield* setStatus(run.leaderboard_id, (current) => current === "running" ? stored.prior_status : null)
            // the run's decision serves only if it did end as succeeded (a cancel that came first keeps the old one)
            if (end.status === "succeeded" && end.serving !== undefined && end.serving !== null) {
              yield* leaderboards.setRankingWinner(run.leaderboard_id, end.serving)
            }
            return [true, new Map(tables).set(runId, { ...stored, run })] as const
          })
        ),
      results: (runId, page) =>
        read((tables): ReadonlyArray<ResultRow> => {
          const stored = tables.get(runId)
          if (stored === undefined) return []
          const cells = [...stored.cells.values()]
          return stored.rows.slice(page.offset, page.offset + page.limit).map((row) => ({
            index: row.index,
            input: row.input,
            reference: row.reference,
            cells: cells.filter((c) => c.row_index === row.index).sort((a, b) => byText(a.candidate_id, b.candidate_id))
          }))
        })
    })
  })
)

export const RunRepositoryMemory = { layer }
