import { assert, describe, layer } from "@effect/vitest"
import type { WorkspaceRepository } from "@podium/domain/access"
import { Leaderboard, LeaderboardRepository, type LeaderboardStatus, type ServingDecision } from "@podium/domain/leaderboards"
import {
  type CandidateResult,
  type Cell,
  type CellTally,
  type CellVerdict,
  Run,
  type RunDataset,
  RunInProgress,
  RunRepository,
  type RunRow,
  runView,
  type RunView
} from "@podium/domain/runs"
import { RunId } from "@podium/domain/shared"
import { DateTime, Effect, Exit, type Layer, Option } from "effect"
import { aLeaderboard } from "./LeaderboardRepository.contract.ts"
import { aUser } from "./WorkspaceRepository.contract.ts"

const t0 = DateTime.makeUnsafe("2026-11-22T10:00:00.000Z")
const at = (minutes: number) => DateTime.add(t0, { minutes })

const uuid = () => crypto.randomUUID() as string
/** Candidate ids in the order the database sorts them. */
const candidates = (count: number) => Array.from({ length: count }, uuid).sort()

/** A leaderboard of its own, in a workspace of its own. */
const aBoard = (status: LeaderboardStatus = "active") =>
  Effect.gen(function*() {
    const leaderboard = new Leaderboard({ ...aLeaderboard((yield* aUser()).workspaceId), status })
    yield* (yield* LeaderboardRepository).insert(leaderboard)
    return leaderboard
  })

const aRun = (
  leaderboard: Leaderboard,
  options: { readonly model_ids?: ReadonlyArray<string>; readonly created_at?: DateTime.Utc; readonly id?: RunId } = {}
) =>
  new Run({
    id: options.id ?? RunId.make(uuid()),
    leaderboard_id: leaderboard.id,
    workspace_id: leaderboard.workspace_id,
    status: "queued",
    run_source: "manual",
    eval_type: "exact",
    model_ids: options.model_ids ?? candidates(2),
    improve_dataset: false,
    progress: { total: 0, completed: 0, failed: 0 },
    results: [],
    winner_leaderboard_model_id: null,
    dataset: null,
    error: null,
    created_at: options.created_at ?? t0,
    started_at: null,
    finished_at: null
  })

const aDataset = (rows: number): RunDataset => ({
  dataset_type: "PUSH",
  url: null,
  version: 3,
  available_rows: rows + 1,
  skipped_rows: 1,
  rows,
  seed: null
})

/** Rows 0..count-1; odd rows have no reference, every third asks with messages. */
const rowsOf = (count: number): Array<RunRow> =>
  Array.from({ length: count }, (_, index) => ({
    index,
    prompt: index % 3 === 0 ? { messages: [{ role: "user", content: `q${index}` }] } : { input: `q${index}` },
    input: `q${index}`,
    reference: index % 2 === 0 ? `a${index}` : null
  }))

const aCell = (candidate_id: string, row_index: number, fields: Partial<Cell> = {}): Cell => ({
  row_index,
  candidate_id,
  output: `answer ${row_index}`,
  verdict: "correct",
  reason: null,
  error: null,
  latency_ms: 100,
  cost_usd: null,
  ...fields
})

const aResult = (leaderboard_model_id: string): CandidateResult => ({
  leaderboard_model_id,
  name: "self-hosted",
  correct: 1,
  total: 2,
  score: 50,
  score_low: 9.5,
  score_high: 90.5,
  rank: 1,
  latency_ms_p50: 100,
  latency_ms_p95: 100,
  total_cost_usd: null,
  errors: 1
})

const succeeded = { status: "succeeded", results: [], winner: null, error: null } as const
const cancelled = { status: "cancelled", results: [], winner: null, error: null } as const

const found = (id: RunId) =>
  Effect.flatMap(RunRepository, (runs) =>
    Effect.map(runs.find(id), (run) => {
      assert.isTrue(Option.isSome(run), `run ${id} was expected`)
      return runView(Option.getOrThrow(run))
    }))

const leaderboardOf = (leaderboard: Leaderboard) =>
  Effect.flatMap(LeaderboardRepository, (repository) =>
    Effect.map(repository.find(leaderboard.id), (l) => {
      const current = Option.getOrThrow(l)
      return { status: current.status, version: current.version }
    }))

/** Tallies by candidate id: the adapters may give them in any order. */
const talliesOf = (runId: RunId) =>
  Effect.flatMap(RunRepository, (runs) =>
    Effect.map(runs.tallies(runId), (tallies) => [...tallies].sort((a, b) => a.candidate_id < b.candidate_id ? -1 : 1)))

const indexesOf = (rows: ReadonlyArray<RunRow>) => rows.map((r) => r.index)

/**
 * The behaviour the use cases rely on, declared once and run against every adapter of
 * `RunRepository` (STYLE.md 19): `makeLayer` builds a fresh one.
 */
export const runRepositoryContract = (
  name: string,
  makeLayer: () => Layer.Layer<RunRepository | LeaderboardRepository | WorkspaceRepository, unknown>
) =>
  describe(`RunRepository contract: ${name}`, () => {
    layer(makeLayer(), { timeout: 60_000 })((it) => {
      it.effect("a created run is queued and found as given; a leaderboard's runs are listed newest first", () =>
        Effect.gen(function*() {
          const runs = yield* RunRepository
          const leaderboard = yield* aBoard()
          const first = aRun(leaderboard, { created_at: t0 })
          yield* runs.create(first)
          assert.deepStrictEqual(yield* found(first.id), runView(first))
          assert.isTrue(Option.isNone(yield* runs.find(RunId.make(uuid()))))
          assert.deepStrictEqual(yield* runs.status(first.id), Option.some("queued" as const))
          assert.isTrue(Option.isNone(yield* runs.status(RunId.make(uuid()))))
          assert.include((yield* runs.queuedBefore(at(1))).map((r) => r.id), first.id)
          assert.notInclude((yield* runs.queuedBefore(t0)).map((r) => r.id), first.id)

          yield* runs.end(first.id, cancelled, at(1))
          assert.deepStrictEqual(yield* runs.status(first.id), Option.some("cancelled" as const))
          assert.notInclude((yield* runs.queuedBefore(at(9))).map((r) => r.id), first.id)
          // two at the same instant: the greater id first
          const [low, high] = [RunId.make(uuid()), RunId.make(uuid())].sort()
          yield* runs.create(aRun(leaderboard, { id: low!, created_at: at(2) }))
          yield* runs.end(low!, cancelled, at(3))
          yield* runs.create(aRun(leaderboard, { id: high!, created_at: at(2) }))
          yield* runs.create(aRun(yield* aBoard(), { created_at: at(9) })) // another leaderboard's

          const listed = (limit: number, offset: number) =>
            Effect.map(runs.list(leaderboard.id, { limit, offset }), (page) => page.map((r) => r.id))
          assert.deepStrictEqual(yield* listed(10, 0), [high, low, first.id])
          assert.deepStrictEqual(yield* listed(1, 1), [low])
          assert.deepStrictEqual(yield* listed(10, 3), [])
        }))

      it.effect("a second run while one is active is refused, naming the active one; other leaderboards are free", () =>
        Effect.gen(function*() {
          const runs = yield* RunRepository
          const leaderboard = yield* aBoard()
          const active = aRun(leaderboard)
          yield* runs.create(active)
          const refused = aRun(leaderboard, { created_at: at(1) })
          const expected = new RunInProgress({ leaderboard_id: leaderboard.id, run_id: active.id })
          assert.deepStrictEqual(yield* Effect.flip(runs.create(refused)), expected)
          assert.isTrue(Option.isNone(yield* runs.find(refused.id)))
          // running is active too
          assert.isTrue(yield* runs.start(active.id, aDataset(1), rowsOf(1), at(1)))
          assert.deepStrictEqual(yield* Effect.flip(runs.create(refused)), expected)

          yield* runs.create(aRun(yield* aBoard()))

          assert.isTrue(yield* runs.end(active.id, succeeded, at(2)))
          yield* runs.create(refused)
          assert.strictEqual((yield* found(refused.id)).status, "queued")
        }))

      it.effect("concurrent creates on one leaderboard: one run is stored, the others name it", () =>
        Effect.gen(function*() {
          const runs = yield* RunRepository
          const leaderboard = yield* aBoard()
          const tried = Array.from({ length: 6 }, (_, i) => aRun(leaderboard, { created_at: at(i) }))
          const exits = yield* Effect.forEach(tried, (run) => Effect.exit(runs.create(run)), { concurrency: "unbounded" })
          const winners = tried.filter((_, i) => Exit.isSuccess(exits[i]!))
          assert.strictEqual(winners.length, 1)
          for (const exit of exits) {
            if (Exit.isFailure(exit)) {
              assert.deepStrictEqual(
                Exit.findErrorOption(exit),
                Option.some(new RunInProgress({ leaderboard_id: leaderboard.id, run_id: winners[0]!.id }))
              )
            }
          }
          assert.deepStrictEqual((yield* runs.list(leaderboard.id, { limit: 10, offset: 0 })).map((r) => r.id), [winners[0]!.id])
          assert.deepStrictEqual(yield* leaderboardOf(leaderboard), { status: "running", version: 2 })
        }))

      for (const prior of ["active", "paused", "archived"] as const) {
        it.effect(`the leaderboard is running while a run is active and ${prior} again after it`, () =>
          Effect.gen(function*() {
            const runs = yield* RunRepository
            const leaderboard = yield* aBoard(prior)
            const run = aRun(leaderboard)
            yield* runs.create(run)
            // each status write is a change of the leaderboard: a write computed before it loses
            assert.deepStrictEqual(yield* leaderboardOf(leaderboard), { status: "running", version: 2 })
            assert.isFalse(yield* (yield* LeaderboardRepository).update(new Leaderboard({ ...leaderboard, name: "stale", version: 2 })))
            assert.isTrue(yield* runs.start(run.id, aDataset(1), rowsOf(1), at(1)))
            assert.deepStrictEqual(yield* leaderboardOf(leaderboard), { status: "running", version: 2 })
            assert.isTrue(yield* runs.end(run.id, succeeded, at(2)))
            assert.deepStrictEqual(yield* leaderboardOf(leaderboard), { status: prior, version: 3 })
          }))
      }

      it.effect("a leaderboard found running with no run gets active back", () =>
        Effect.gen(function*() {
          const runs = yield* RunRepository
          const leaderboard = yield* aBoard("running")
          const run = aRun(leaderboard)
          yield* runs.create(run)
          assert.deepStrictEqual(yield* leaderboardOf(leaderboard), { status: "running", version: 2 })
          yield* runs.end(run.id, cancelled, at(1))
          assert.deepStrictEqual(yield* leaderboardOf(leaderboard), { status: "active", version: 3 })
        }))

      it.effect("a status a client set while the run was active is kept when it ends", () =>
        Effect.gen(function*() {
          const runs = yield* RunRepository
          const leaderboards = yield* LeaderboardRepository
          const leaderboard = yield* aBoard()
          const run = aRun(leaderboard)
          yield* runs.create(run)
          const running = Option.getOrThrow(yield* leaderboards.find(leaderboard.id))
          assert.isTrue(yield* leaderboards.update(new Leaderboard({ ...running, status: "paused", version: running.version + 1 })))
          assert.isTrue(yield* runs.end(run.id, succeeded, at(1)))
          assert.deepStrictEqual(yield* leaderboardOf(leaderboard), { status: "paused", version: 3 })
        }))

      it.effect("start stores the rows and marks the run running with its dataset, once", () =>
        Effect.gen(function*() {
          const runs = yield* RunRepository
          const leaderboard = yield* aBoard()
          const run = aRun(leaderboard, { model_ids: candidates(3) })
          yield* runs.create(run)
          const rows = rowsOf(4)
          // given in any order, kept in index order
          assert.isTrue(yield* runs.start(run.id, aDataset(4), [rows[2]!, rows[0]!, rows[3]!, rows[1]!], at(1)))
          assert.deepStrictEqual(yield* found(run.id), {
            ...runView(run),
            status: "running",
            dataset: aDataset(4),
            started_at: DateTime.formatIso(at(1)),
            progress: { total: 12, completed: 0, failed: 0 }
          })
          assert.deepStrictEqual(yield* runs.pendingRows(run.id, run.model_ids[0]!, 0, 10), rows)

          // again, with other rows: nothing changes
          assert.isFalse(yield* runs.start(run.id, aDataset(1), [{ ...rows[0]!, input: "other" }], at(2)))
          assert.deepStrictEqual((yield* found(run.id)).started_at, DateTime.formatIso(at(1)))
          assert.deepStrictEqual((yield* found(run.id)).dataset, aDataset(4))
          assert.deepStrictEqual(yield* runs.pendingRows(run.id, run.model_ids[0]!, 0, 10), rows)

          // a run ended before it started does not start; nor does an unknown one
          const queued = aRun(yield* aBoard())
          yield* runs.create(queued)
          assert.isTrue(yield* runs.end(queued.id, cancelled, at(1)))
          assert.isFalse(yield* runs.start(queued.id, aDataset(1), rowsOf(1), at(2)))
          assert.deepStrictEqual(yield* found(queued.id), {
            ...runView(queued),
            status: "cancelled",
            finished_at: DateTime.formatIso(at(1))
          })
          assert.deepStrictEqual(yield* runs.pendingRows(queued.id, queued.model_ids[0]!, 0, 10), [])
          assert.isFalse(yield* runs.start(RunId.make(uuid()), aDataset(1), rowsOf(1), at(2)))
        }))

      it.effect("pending rows are those in [from, to) without a cell of the candidate, in index order", () =>
        Effect.gen(function*() {
          const runs = yield* RunRepository
          const run = aRun(yield* aBoard())
          const [a, b] = run.model_ids as [string, string]
          yield* runs.create(run)
          yield* runs.start(run.id, aDataset(6), rowsOf(6), at(1))
          for (const row of [1, 3, 5]) yield* runs.saveCell(run.id, aCell(a, row), at(2))
          yield* runs.saveCell(run.id, aCell(a, 4, { output: null, verdict: "incorrect", error: "timeout" }), at(2))
          yield* runs.saveCell(run.id, aCell(b, 0), at(2))
          assert.deepStrictEqual(indexesOf(yield* runs.pendingRows(run.id, a, 0, 6)), [0, 2])
          assert.deepStrictEqual(indexesOf(yield* runs.pendingRows(run.id, a, 2, 4)), [2])
          assert.deepStrictEqual(indexesOf(yield* runs.pendingRows(run.id, a, 3, 6)), [])
          assert.deepStrictEqual(yield* runs.pendingRows(run.id, b, 0, 3), rowsOf(3).slice(1))
          assert.deepStrictEqual(indexesOf(yield* runs.pendingRows(run.id, b, 4, 100)), [4, 5])
          assert.deepStrictEqual(indexesOf(yield* runs.pendingRows(run.id, uuid(), 0, 6)), [0, 1, 2, 3, 4, 5])
        }))

      it.effect("a cell is written once: a second write of it changes nothing", () =>
        Effect.gen(function*() {
          const runs = yield* RunRepository
          const run = aRun(yield* aBoard())
          const [a] = run.model_ids as [string]
          yield* runs.create(run)
          yield* runs.start(run.id, aDataset(1), rowsOf(1), at(1))
          const first = aCell(a, 0, { output: "first", verdict: "correct", reason: "matches", latency_ms: 120, cost_usd: 0.5 })
          yield* runs.saveCell(run.id, first, at(2))
          const tallies = yield* talliesOf(run.id)
          yield* runs.saveCell(
            run.id,
            aCell(a, 0, { output: null, verdict: "incorrect", reason: null, error: "later", latency_ms: 9, cost_usd: 2 }),
            at(3)
          )
          assert.deepStrictEqual(yield* runs.results(run.id, { limit: 10, offset: 0 }), [
            { index: 0, input: "q0", reference: "a0", cells: [first] }
          ])
          assert.deepStrictEqual(yield* talliesOf(run.id), tallies)
          assert.deepStrictEqual((yield* found(run.id)).progress, { total: 2, completed: 1, failed: 0 })
        }))

      it.effect("tallies count verdicts and errors, take nearest-rank latencies of answered calls and sum known costs", () =>
        Effect.gen(function*() {
          const runs = yield* RunRepository
          const [a, b, c] = candidates(3) as [string, string, string]
          const run = aRun(yield* aBoard(), { model_ids: [a, b, c] })
          yield* runs.create(run)
          assert.deepStrictEqual(yield* runs.tallies(run.id), [])
          yield* runs.start(run.id, aDataset(20), rowsOf(20), at(1))
          // a: ten answered calls, scored 6 right and 3 wrong, one the judge could not score ...
          const latencies = [50, 10, 40, 30, 20, 100, 90, 80, 70, 60]
          for (const [row, latency_ms] of latencies.entries()) {
            yield* runs.saveCell(
              run.id,
              aCell(a, row, {
                latency_ms,
                verdict: row < 6 ? "correct" : row < 9 ? "incorrect" : null,
                error: row === 9 ? "judge: not JSON" : null,
                cost_usd: row < 4 ? 0.25 : null
              }),
              at(2)
            )
          }
          // ... one failed call (its latency is not an answer's), one answered without a latency
          yield* runs.saveCell(run.id, aCell(a, 10, { output: null, verdict: "incorrect", error: "timeout", latency_ms: 1 }), at(2))
          yield* runs.saveCell(run.id, aCell(a, 11, { latency_ms: null, cost_usd: 0.5 }), at(2))
          // b: failed calls only, no cost known
          for (const row of [0, 1]) {
            yield* runs.saveCell(run.id, aCell(b, row, { output: null, verdict: "incorrect", error: "HTTP 500" }), at(2))
          }
          // c: 20 answered calls, latencies 1..20 (given in reverse)
          for (let row = 0; row < 20; row++) {
            yield* runs.saveCell(run.id, aCell(c, row, { latency_ms: 20 - row, cost_usd: 0.125, verdict: "incorrect" }), at(2))
          }
          const expected: Array<CellTally> = [
            { candidate_id: a, correct: 7, total: 11, errors: 2, latency_ms_p50: 50, latency_ms_p95: 100, total_cost_usd: 1.5 },
            { candidate_id: b, correct: 0, total: 2, errors: 2, latency_ms_p50: null, latency_ms_p95: null, total_cost_usd: null },
            { candidate_id: c, correct: 0, total: 20, errors: 0, latency_ms_p50: 10, latency_ms_p95: 19, total_cost_usd: 2.5 }
          ]
          assert.deepStrictEqual(yield* talliesOf(run.id), expected)
          assert.deepStrictEqual(yield* runs.tallies(RunId.make(uuid())), [])
        }))

      it.effect("costs are summed exactly: 0.01 + 0.02 + 0.02 is 0.05, and sums floats drift on come out exact", () =>
        Effect.gen(function*() {
          const runs = yield* RunRepository
          const [a, b, c] = candidates(3) as [string, string, string]
          const run = aRun(yield* aBoard(), { model_ids: [a, b, c] })
          yield* runs.create(run)
          yield* runs.start(run.id, aDataset(10), rowsOf(10), at(1))
          // as floats added in order: 0.05, 0.049999999999999996 and 0.9999999999999999
          const costs: ReadonlyArray<readonly [string, ReadonlyArray<number>]> = [
            [a, [0.01, 0.02, 0.02]],
            [b, [0.04, 0.005, 0.005]],
            [c, Array.from({ length: 10 }, () => 0.1)]
          ]
          for (const [candidate, known] of costs) {
            // one at a time, in order, as a float sum in storage order would add them
            for (const [row, cost_usd] of known.entries()) yield* runs.saveCell(run.id, aCell(candidate, row, { cost_usd }), at(2))
          }
          const totals = (yield* talliesOf(run.id)).map((t) => [t.candidate_id, t.total_cost_usd])
          assert.deepStrictEqual(totals, [[a, 0.05], [b, 0.05], [c, 1]])
        }))

      it.effect("a run's requested sample is stored with it, and with the dataset it started on", () =>
        Effect.gen(function*() {
          const runs = yield* RunRepository
          const leaderboard = yield* aBoard()
          const run = new Run({ ...aRun(leaderboard), sample: { size: 7, seed: 2 ** 31 - 1 } })
          yield* runs.create(run)
          assert.deepStrictEqual((yield* found(run.id)).sample, { size: 7, seed: 2 ** 31 - 1 })
          const dataset: RunDataset = { ...aDataset(4), sample: { size: 7, seed: 2 ** 31 - 1 } }
          yield* runs.start(run.id, dataset, rowsOf(4), at(1))
          assert.deepStrictEqual(yield* found(run.id), {
            ...runView(run),
            status: "running",
            dataset,
            started_at: DateTime.formatIso(at(1)),
            progress: { total: 8, completed: 0, failed: 0 }
          })
          const plain = aRun(yield* aBoard())
          yield* runs.create(plain)
          assert.isNull((yield* found(plain.id)).sample)
        }))

      it.effect("progress is counted while the run is active and frozen when it ends; ending twice does nothing", () =>
        Effect.gen(function*() {
          const runs = yield* RunRepository
          const leaderboard = yield* aBoard()
          const run = aRun(leaderboard)
          const [a, b] = run.model_ids as [string, string]
          yield* runs.create(run)
          yield* runs.start(run.id, aDataset(3), rowsOf(3), at(1))
          yield* runs.saveCell(run.id, aCell(a, 0), at(2))
          yield* runs.saveCell(run.id, aCell(b, 0, { output: null, verdict: "incorrect", error: "timeout" }), at(2))
          assert.deepStrictEqual((yield* found(run.id)).progress, { total: 6, completed: 2, failed: 1 })
          yield* runs.saveCell(run.id, aCell(a, 1), at(3))
          assert.deepStrictEqual((yield* found(run.id)).progress, { total: 6, completed: 3, failed: 1 })

          const end = { status: "succeeded", results: [aResult(a), { ...aResult(b), rank: 2 }], winner: a, error: null } as const
          assert.isTrue(yield* runs.end(run.id, end, at(4)))
          const ended: RunView = {
            ...runView(run),
            status: "succeeded",
            dataset: aDataset(3),
            started_at: DateTime.formatIso(at(1)),
            finished_at: DateTime.formatIso(at(4)),
            progress: { total: 6, completed: 3, failed: 1 },
            results: end.results,
            winner_leaderboard_model_id: a
          }
          assert.deepStrictEqual(yield* found(run.id), ended)
          assert.deepStrictEqual((yield* runs.list(leaderboard.id, { limit: 1, offset: 0 })).map(runView), [ended])

          // a late cell (a call that finished after a cancel) is not stored, and the progress stays as recorded
          yield* runs.saveCell(run.id, aCell(b, 1), at(5))
          assert.strictEqual((yield* runs.results(run.id, { limit: 10, offset: 0 }))[1]!.cells.length, 1)
          assert.deepStrictEqual(yield* found(run.id), ended)

          const version = yield* leaderboardOf(leaderboard)
          assert.isFalse(yield* runs.end(run.id, { status: "failed", results: [], winner: null, error: "late" }, at(6)))
          assert.deepStrictEqual(yield* found(run.id), ended)
          assert.deepStrictEqual(yield* leaderboardOf(leaderboard), version)
          assert.isFalse(yield* runs.end(RunId.make(uuid()), succeeded, at(6)))
        }))

      it.effect("verdicts: every cell's, null for one with an error or without a verdict, and whether it was answered", () =>
        Effect.gen(function*() {
          const runs = yield* RunRepository
          const [a, b] = candidates(2) as [string, string]
          const run = aRun(yield* aBoard(), { model_ids: [a, b] })
          yield* runs.create(run)
          assert.deepStrictEqual(yield* runs.verdicts(run.id), [])
          yield* runs.start(run.id, aDataset(4), rowsOf(4), at(1))
          yield* runs.saveCell(run.id, aCell(a, 0), at(2))
          yield* runs.saveCell(run.id, aCell(a, 1, { verdict: "incorrect" }), at(2))
          // a failed call (incorrect with an error) and a judge's failure (answered, no verdict)
          yield* runs.saveCell(run.id, aCell(a, 2, { output: null, verdict: "incorrect", error: "timeout" }), at(2))
          yield* runs.saveCell(run.id, aCell(a, 3, { verdict: null, error: "judge: not JSON" }), at(2))
          yield* runs.saveCell(run.id, aCell(b, 3, { verdict: "incorrect" }), at(2))
          const byKey = (x: CellVerdict, y: CellVerdict) =>
            x.candidate_id < y.candidate_id ? -1 : x.candidate_id > y.candidate_id ? 1 : x.row_index - y.row_index
          assert.deepStrictEqual([...(yield* runs.verdicts(run.id))].sort(byKey), [
            { row_index: 0, candidate_id: a, verdict: "correct", answered: true },
            { row_index: 1, candidate_id: a, verdict: "incorrect", answered: true },
            { row_index: 2, candidate_id: a, verdict: null, answered: false },
            { row_index: 3, candidate_id: a, verdict: null, answered: true },
            { row_index: 3, candidate_id: b, verdict: "incorrect", answered: true }
          ])
          assert.deepStrictEqual(yield* runs.verdicts(RunId.make(uuid())), [])
        }))

      it.effect("the end stores the pairwise comparisons and the serving decision; the ranking serves only `serving`", () =>
        Effect.gen(function*() {
          const runs = yield* RunRepository
          const repository = yield* LeaderboardRepository
          const leaderboard = yield* aBoard()
          const servingOf = Effect.map(repository.findServing(leaderboard.id), (s) => Option.getOrThrow(s).ranking_winner)
          const kept = aRun(leaderboard)
          const [a, b] = kept.model_ids as [string, string]
          const pairwise = [{
            a,
            b,
            shared_rows: 3,
            wins: 2,
            losses: 0,
            ties: 1,
            p_value: 0.5,
            p_adjusted: 0.5,
            difference: { estimate: 2 / 3, low: 0.1, high: 0.9 }
          }]
          const keep: ServingDecision = {
            action: "keep",
            from_candidate_id: b,
            to_candidate_id: b,
            reason: "kept b",
            shared_rows: 3,
            p_value: 0.5,
            difference: { estimate: 2 / 3, low: 0.1, high: 0.9 },
            chosen_among_ties: false
          }
          yield* runs.create(kept)
          yield* runs.start(kept.id, aDataset(3), rowsOf(3), at(1))
          // the ranking's top (the run's winner) does not serve on its own
          assert.isTrue(yield* runs.end(kept.id, { ...succeeded, winner: a, serving: null, pairwise, serving_decision: keep }, at(2)))
          assert.deepStrictEqual(
            [(yield* found(kept.id)).winner_leaderboard_model_id, (yield* found(kept.id)).pairwise, (yield* found(kept.id)).serving_decision],
            [a, pairwise, keep]
          )
          assert.isNull(yield* servingOf)

          const switched = aRun(leaderboard, { model_ids: [a, b] })
          const decision: ServingDecision = { ...keep, action: "switch", to_candidate_id: a, reason: "switched to a" }
          yield* runs.create(switched)
          yield* runs.start(switched.id, aDataset(3), rowsOf(3), at(3))
          assert.isTrue(yield* runs.end(switched.id, { ...succeeded, winner: a, serving: a, pairwise, serving_decision: decision }, at(4)))
          assert.deepStrictEqual((yield* found(switched.id)).serving_decision, decision)
          assert.strictEqual(yield* servingOf, a)

          // a cancelled run serves nothing, and a run ended without a decision shows none
          const stopped = aRun(leaderboard, { model_ids: [a, b] })
          yield* runs.create(stopped)
          assert.isTrue(yield* runs.end(stopped.id, { ...cancelled, serving: b, pairwise, serving_decision: decision }, at(5)))
          assert.strictEqual(yield* servingOf, a)
          const plain = aRun(leaderboard, { model_ids: [a, b] })
          yield* runs.create(plain)
          yield* runs.end(plain.id, succeeded, at(6))
          assert.deepStrictEqual([(yield* found(plain.id)).pairwise, (yield* found(plain.id)).serving_decision], [null, null])
        }))

      it.effect("a failed run keeps its error; one ended before it started has no progress", () =>
        Effect.gen(function*() {
          const runs = yield* RunRepository
          const failed = aRun(yield* aBoard())
          yield* runs.create(failed)
          yield* runs.start(failed.id, aDataset(2), rowsOf(2), at(1))
          assert.isTrue(yield* runs.end(failed.id, { status: "failed", results: [], winner: null, error: "dataset gone" }, at(2)))
          assert.deepStrictEqual(
            [(yield* found(failed.id)).status, (yield* found(failed.id)).error, (yield* found(failed.id)).progress],
            ["failed", "dataset gone", { total: 4, completed: 0, failed: 0 }]
          )
          const queued = aRun(yield* aBoard())
          yield* runs.create(queued)
          assert.isTrue(yield* runs.end(queued.id, cancelled, at(1)))
          assert.deepStrictEqual((yield* found(queued.id)).progress, { total: 0, completed: 0, failed: 0 })
        }))

      it.effect("results are the rows in index order, paged, each with the cells so far in candidate order", () =>
        Effect.gen(function*() {
          const runs = yield* RunRepository
          const run = aRun(yield* aBoard())
          const [a, b] = run.model_ids as [string, string]
          yield* runs.create(run)
          yield* runs.start(run.id, aDataset(5), rowsOf(5), at(1))
          const b0 = aCell(b, 0, { verdict: "incorrect", reason: "off topic", cost_usd: 0.001, latency_ms: 812.5 })
          const a0 = aCell(a, 0, { output: "a0" })
          const b1 = aCell(b, 1, { output: null, verdict: null, error: "judge: timeout", latency_ms: null })
          yield* runs.saveCell(run.id, b0, at(2))
          yield* runs.saveCell(run.id, b1, at(2))
          yield* runs.saveCell(run.id, a0, at(3))
          const page = (limit: number, offset: number) => runs.results(run.id, { limit, offset })
          assert.deepStrictEqual(yield* page(2, 0), [
            { index: 0, input: "q0", reference: "a0", cells: [a0, b0] },
            { index: 1, input: "q1", reference: null, cells: [b1] }
          ])
          assert.deepStrictEqual(yield* page(10, 2), [
            { index: 2, input: "q2", reference: "a2", cells: [] },
            { index: 3, input: "q3", reference: null, cells: [] },
            { index: 4, input: "q4", reference: "a4", cells: [] }
          ])
          assert.deepStrictEqual(yield* page(10, 5), [])
          assert.deepStrictEqual(yield* runs.results(RunId.make(uuid()), { limit: 10, offset: 0 }), [])
        }))

      it.effect("text Postgres cannot hold: U+0000 in a row is refused, a lone surrogate in its text becomes U+FFFD; cells store both as U+FFFD", () =>
        Effect.gen(function*() {
          const runs = yield* RunRepository
          const run = aRun(yield* aBoard())
          const [a, b] = run.model_ids as [string, string]
          yield* runs.create(run)
          assert.isTrue(Exit.hasDies(yield* Effect.exit(runs.start(run.id, aDataset(1), [{ ...rowsOf(1)[0]!, input: "a\u0000b" }], at(1)))))
          assert.isTrue(Exit.hasDies(
            yield* Effect.exit(runs.start(run.id, aDataset(1), [{ ...rowsOf(1)[0]!, prompt: { input: "a\ud800" } }], at(1)))
          ))
          assert.strictEqual((yield* found(run.id)).status, "queued")
          yield* runs.start(run.id, aDataset(1), [{ index: 0, prompt: { input: "q" }, input: "q\udc00", reference: null }], at(1))
          // a cell is written with others (one statement): its text never fails the group
          yield* runs.saveCell(run.id, aCell(a, 0, { output: "x\u0000", reason: "r\u0000", error: "e\udc00" }), at(2))
          yield* runs.saveCell(run.id, aCell(b, 0, { output: "x\ud800y" }), at(2))
          const [row] = yield* runs.results(run.id, { limit: 1, offset: 0 })
          assert.deepStrictEqual(
            [row!.input, ...row!.cells.map((c) => [c.candidate_id, c.output, c.reason, c.error])].sort(),
            ["q\uFFFD", [a, "x\uFFFD", "r\uFFFD", "e\uFFFD"], [b, "x\uFFFDy", aCell(b, 0).reason, aCell(b, 0).error]].sort()
          )
        }))
    })
  })
