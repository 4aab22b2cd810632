import { Context, DateTime, Duration, Effect, Layer, Option, Random, Result, Schedule, Semaphore } from "effect"
import type { Principal } from "../access/index.ts"
import { DatasetRepository } from "../datasets/index.ts"
import {
  buildMessages,
  type ChatCompletion,
  ChatProvider,
  type ChatProviderFailed,
  type ChatTarget,
  type ChatRequest,
  ChatTargets,
  isCallable,
  PriceCatalogue,
  ServiceModels,
  TraceWriter
} from "../inference/index.ts"
import {
  type Candidate,
  type Leaderboard,
  LeaderboardArchived,
  type LeaderboardId,
  LeaderboardRepository,
  Leaderboards,
  nextOccurrence,
  runScheduleOf,
  schedulesRuns
} from "../leaderboards/index.ts"
import { IdGenerator, InvalidInput, NotFound, storableText, storeThenEnqueue } from "../shared/index.ts"
import { rank, winnerOf } from "./Ranking.ts"
import { type Cell, inputKey, isActive, Run, type RunDataset, type RunRow, runnable, type RunSource } from "./Run.ts"
import { DatasetUnavailable } from "./RunDatasetSource.ts"
import { RunDatasets } from "./RunDatasets.ts"
import { ImprovementRepository } from "./ImprovementRepository.ts"
import { type Agreement, agreement } from "./Agreement.ts"
import { HumanVerdicts } from "./HumanVerdicts.ts"
import { chooseRows, mapRows } from "./RunRows.ts"
import { DatasetMissing, NotRunnable, RunEnded, RunInProgress } from "./RunErrors.ts"
import { RunQueue } from "./RunQueue.ts"
import { type ResultRow, RunRepository } from "./RunRepository.ts"
import { exactMatch, judgeModelOf, judgeRequest, parseJudgeReply } from "./Scoring.ts"

/** Calls in flight at once per candidate (RUN_CONCURRENCY). */
export const RunConcurrency = Context.Reference<number>("@podium/domain/runs/RunConcurrency", { defaultValue: () => 8 })

/** Rows one step of a run asks one candidate (one durable activity): what a restart may have to look through again. */
export const runChunkRows = 200

/** A call that failed for a passing reason (time-out, refused connection, 429, 5xx) is tried this often in all. */
export const runAttempts = 4

const retryable = (error: ChatProviderFailed) =>
  error.upstream_status === null || error.upstream_status === 429 || error.upstream_status >= 500

type Answer = Result.Result<ChatCompletion, ChatProviderFailed>

const backoff = Schedule.exponential(Duration.millis(250)).pipe(Schedule.jittered)

export interface StartRequest {
  readonly model_ids?: ReadonlyArray<string> | undefined
  readonly run_source?: RunSource | undefined
  readonly improve_dataset?: boolean | undefined
}

/**
 * Runs: every chosen candidate asked every row of the leaderboard's dataset, each answer scored
 * (exact or by the judge model), the candidates ranked and the winner served under
 * `ranking_winner`. A run is a durable job (RunQueue); its steps below are each safe to repeat.
 */
export class Runs extends Context.Service<Runs, {
  readonly start: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    request: StartRequest
  ) => Effect.Effect<Run, NotFound | InvalidInput | LeaderboardArchived | NotRunnable | DatasetMissing | RunInProgress>
  readonly list: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    page: { readonly limit: number; readonly offset: number }
  ) => Effect.Effect<ReadonlyArray<Run>, NotFound>
  readonly get: (principal: Principal, leaderboardId: LeaderboardId, runId: string) => Effect.Effect<Run, NotFound>
  readonly results: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    runId: string,
    page: { readonly limit: number; readonly offset: number }
  ) => Effect.Effect<{ readonly run: Run; readonly rows: ReadonlyArray<ResultRow> }, NotFound>
  readonly cancel: (principal: Principal, leaderboardId: LeaderboardId, runId: string) => Effect.Effect<Run, NotFound | RunEnded>
  /** How far the run's judge agrees with people who judged the same answers (judge runs only). */
  readonly agreement: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    runId: string
  ) => Effect.Effect<Agreement, NotFound | NotRunnable>
  /** What the run's steps need to know of it. */
  readonly describe: (runId: string) => Effect.Effect<{ readonly improve_dataset: boolean; readonly leaderboard_id: string }>
  /** Step 1: fixes the run's rows (fetched or read now) and marks it running; answers how many, and who is asked. */
  readonly prepare: (
    runId: string
  ) => Effect.Effect<{ readonly rows: number; readonly model_ids: ReadonlyArray<string> }, DatasetUnavailable | DatasetMissing>
  /** Step 2, per candidate and chunk of rows: asks the rows in [from, to) the candidate has not answered. */
  readonly ask: (runId: string, candidateId: string, from: number, to: number) => Effect.Effect<void>
  /** Step 3: ranks, records the winner (served at once) and ends the run. */
  readonly finish: (runId: string) => Effect.Effect<void>
  readonly fail: (runId: string, error: string) => Effect.Effect<void>
  /**
   * Enqueues again the runs queued for over a minute: a crash between storing a run and enqueueing
   * it leaves one (enqueueing is idempotent: a run whose job exists is left to it). Answers how many.
   */
  readonly requeue: Effect.Effect<number>
  /** Starts the runs whose schedules are due (`run_source: "schedule"`); answers how many started. */
  readonly runSchedules: Effect.Effect<number>
}>()("@podium/domain/runs/Runs") {
  static readonly layer = Layer.effect(
    Runs,
    Effect.gen(function*() {
      const runs = yield* RunRepository
      const queue = yield* RunQueue
      const leaderboards = yield* Leaderboards
      const repository = yield* LeaderboardRepository
      const datasets = yield* DatasetRepository
      const datasetRows = yield* RunDatasets
      const improvements = yield* ImprovementRepository
      const humans = yield* HumanVerdicts
      const targets = yield* ChatTargets
      const provider = yield* ChatProvider
      const serviceModels = yield* ServiceModels
      const catalogue = yield* PriceCatalogue
      const traces = yield* TraceWriter
      const ids = yield* IdGenerator

      const judgeOf = (leaderboard: Leaderboard) => judgeModelOf(leaderboard.challenge)

      /** Checks the leaderboard can run, then stores the queued run and enqueues it. */
      const launch = Effect.fnUntraced(function*(leaderboard: Leaderboard, candidates: ReadonlyArray<Candidate>, request: StartRequest) {
        const leaderboardId = leaderboard.id
        const hasVersion = leaderboard.challenge.dataset_type === "PUSH"
          ? (yield* datasets.versions(leaderboardId)).length > 0
          : false
        const chosen = yield* Effect.fromResult(runnable(leaderboard, candidates, request.model_ids, hasVersion))
        const evalType = leaderboard.challenge.eval_type as "exact" | "judge"
        const run = new Run({
          id: yield* ids.next,
          leaderboard_id: leaderboardId,
          workspace_id: leaderboard.workspace_id,
          status: "queued",
          run_source: request.run_source ?? "manual",
          eval_type: evalType,
          model_ids: chosen.map((c) => c.id),
          improve_dataset: request.improve_dataset ?? false,
          progress: { total: 0, completed: 0, failed: 0 },
          results: [],
          winner_leaderboard_model_id: null,
          dataset: null,
          error: null,
          created_at: yield* DateTime.now,
          started_at: null,
          finished_at: null
        })
        yield* storeThenEnqueue(runs.create(run), queue.enqueue(run), { kind: "run", id: run.id })
        return run
      })

      const start = Effect.fn("Runs.start")(function*(principal: Principal, leaderboardId: LeaderboardId, request: StartRequest) {
        const { candidates, leaderboard } = yield* leaderboards.get(principal, leaderboardId)
        return yield* launch(leaderboard, candidates, request)
      })

      const requeue = Effect.gen(function*() {
        const stale = yield* runs.queuedBefore(DateTime.subtract(yield* DateTime.now, { minutes: 1 }))
        yield* Effect.forEach(stale, queue.enqueue, { discard: true })
        return stale.length
      }).pipe(Effect.withSpan("Runs.requeue"))

      const runSchedules = Effect.gen(function*() {
        const now = yield* DateTime.now
        let started = 0
        for (const leaderboard of yield* repository.dueSchedules(now)) {
          const schedule = runScheduleOf(leaderboard.schedule)
          if (Option.isNone(schedule)) continue
          const next = DateTime.formatIso(nextOccurrence(schedule.value, now))
          // one instance claims each occurrence; a missed or skipped one is not made up later
          if (!(yield* repository.advanceSchedule(leaderboard.id, schedule.value.next_run_at, next))) continue
          if (!schedulesRuns(leaderboard, now)) continue
          const candidates = yield* repository.candidates(leaderboard.id)
          // one leaderboard's trouble never holds the others
          yield* launch(leaderboard, candidates, { run_source: "schedule" }).pipe(
            Effect.tap(() => Effect.sync(() => started++)),
            Effect.catchCause((cause) =>
              Effect.logWarning("scheduled run not started", cause).pipe(Effect.annotateLogs({ leaderboard_id: leaderboard.id }))
            )
          )
        }
        return started
      }).pipe(Effect.withSpan("Runs.runSchedules"))

      const visibleRun = Effect.fnUntraced(function*(principal: Principal, leaderboardId: LeaderboardId, runId: string) {
        yield* leaderboards.get(principal, leaderboardId)
        const run = yield* runs.find(runId)
        if (Option.isNone(run) || run.value.leaderboard_id !== leaderboardId) return yield* new NotFound({ resource: "run", id: runId })
        return run.value
      })

      const list = Effect.fn("Runs.list")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        page: { readonly limit: number; readonly offset: number }
      ) {
        yield* leaderboards.get(principal, leaderboardId)
        return yield* runs.list(leaderboardId, page)
      })

      const get = Effect.fn("Runs.get")(function*(principal: Principal, leaderboardId: LeaderboardId, runId: string) {
        return yield* visibleRun(principal, leaderboardId, runId)
      })

      const results = Effect.fn("Runs.results")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        runId: string,
        page: { readonly limit: number; readonly offset: number }
      ) {
        const run = yield* visibleRun(principal, leaderboardId, runId)
        return { run, rows: yield* runs.results(runId, page) }
      })

      const cancel = Effect.fn("Runs.cancel")(function*(principal: Principal, leaderboardId: LeaderboardId, runId: string) {
        const run = yield* visibleRun(principal, leaderboardId, runId)
        if (!isActive(run.status)) return yield* new RunEnded({ run_id: runId, status: run.status })
        const ended = yield* runs.end(runId, { status: "cancelled", results: [], winner: null, error: null }, yield* DateTime.now)
        const now = yield* visibleRun(principal, leaderboardId, runId)
        if (!ended && now.status !== "cancelled") return yield* new RunEnded({ run_id: runId, status: now.status })
        return now
      })

      const runOf = (runId: string) =>
        Effect.flatMap(runs.find(runId), Option.match({
          onNone: () => Effect.die(new Error(`run ${runId} is gone`)),
          onSome: Effect.succeed
        }))

      const leaderboardOf = (run: Run) =>
        Effect.flatMap(repository.findServing(run.leaderboard_id as LeaderboardId), Option.match({
          onNone: () => Effect.die(new Error(`the leaderboard of run ${run.id} is gone`)),
          onSome: Effect.succeed
        }))

      const prepare = Effect.fn("Runs.prepare")(function*(runId: string) {
        const run = yield* runOf(runId)
        if (run.status !== "queued") return { rows: run.dataset?.rows ?? 0, model_ids: run.model_ids }
        const { leaderboard } = yield* leaderboardOf(run)
        const { raw, url, version } = yield* datasetRows.load(leaderboard)
        const mapped = mapRows(raw)
        // improved references (improve-dataset's derived version) stand in for the rows' own
        const improved = yield* improvements.references(leaderboard.id, mapped.rows.map(inputKey))
        let improvedRows = 0
        const withImproved = mapped.rows.map((row) => {
          const better = improved.get(inputKey(row))
          if (better === undefined) return row
          improvedRows++
          return { ...row, reference: better.reference }
        })
        const { auto_limit_size, max_samples_to_gather } = leaderboard.challenge
        const seed = `${run.id}:${yield* Random.nextIntBetween(0, 2 ** 31 - 1)}`
        const { available, rows, sampled } = chooseRows(withImproved, {
          exact: run.eval_type === "exact",
          sample: auto_limit_size && max_samples_to_gather !== null ? max_samples_to_gather : null,
          seed
        })
        const skipped = mapped.skipped + (withImproved.length - available)
        if (rows.length === 0) {
          return yield* new DatasetUnavailable({
            url: url ?? `push dataset version ${version}`,
            reason: run.eval_type === "exact"
              ? "the dataset has no row with both an input and a reference"
              : "the dataset has no row with an input"
          })
        }
        const dataset: RunDataset = {
          dataset_type: leaderboard.challenge.dataset_type,
          url,
          version,
          available_rows: available,
          skipped_rows: skipped,
          improved_rows: improvedRows,
          rows: rows.length,
          seed: sampled ? seed : null
        }
        yield* runs.start(runId, dataset, rows, yield* DateTime.now)
        return { rows: rows.length, model_ids: run.model_ids }
      })

      /**
       * How the candidate is asked: over chat completions at its own prices, else (for router models)
       * the router's catalogue; a Service candidate by its model's deployed version.
       */
      const askerOf = Effect.fnUntraced(function*(candidate: Candidate, leaderboard: Leaderboard, credentials: ReadonlyMap<string, string>) {
        if (!isCallable(candidate)) {
          const modelId = candidate.model_id ?? ""
          return (request: ChatRequest) => serviceModels.complete(leaderboard.workspace_id, modelId, request)
        }
        const own = { input: candidate.input_price_per_m_tokens, output: candidate.output_price_per_m_tokens }
        const prices = (own.input === null || own.output === null) && candidate.platform === "Router" && candidate.model_name !== null
          ? yield* catalogue.routerPrices(candidate.model_name)
          : own
        const target: ChatTarget = {
          ...yield* targets.of(candidate, leaderboard.workspace_id, credentials),
          inputPricePerMTokens: prices.input,
          outputPricePerMTokens: prices.output
        }
        return (request: ChatRequest) => provider.complete(target, request)
      })

      const complete = (send: (request: ChatRequest) => Effect.Effect<ChatCompletion, ChatProviderFailed>, request: ChatRequest) =>
        send(request).pipe(
          Effect.retry({ schedule: backoff, times: runAttempts - 1, while: retryable }),
          Effect.result
        )

      /**
       * Calls in flight per run and candidate, across the chunks this instance works on: the next chunk
       * starts while the last calls of the one before are out, and together they stay within
       * RUN_CONCURRENCY (no drain to zero at every chunk's end).
       */
      const gates = new Map<string, Semaphore.Semaphore>()
      const gateOf = (runId: string, candidateId: string, permits: number) => {
        const key = `${runId}:${candidateId}`
        let gate = gates.get(key)
        if (gate === undefined) gates.set(key, gate = Semaphore.makeUnsafe(permits))
        return gate
      }
      const dropGates = (runId: string) =>
        Effect.sync(() => {
          for (const key of gates.keys()) if (key.startsWith(`${runId}:`)) gates.delete(key)
        })

      const ask = Effect.fn("Runs.ask")(function*(runId: string, candidateId: string, from: number, to: number) {
        const run = yield* runOf(runId)
        if (run.status !== "running") return
        const rows = yield* runs.pendingRows(runId, candidateId, from, to)
        if (rows.length === 0) return
        const { candidates, credentials, leaderboard } = yield* leaderboardOf(run)
        const candidate = candidates.find((c) => c.id === candidateId)
        const asker = candidate === undefined ? Option.none() : Option.some(yield* askerOf(candidate, leaderboard, credentials))
        const judge = run.eval_type === "judge"
          ? yield* Option.match(judgeOf(leaderboard), {
            onNone: () => Effect.succeed(Option.none<ChatTarget>()),
            onSome: (j) => Effect.map(targets.judge(j.provider, j.model, leaderboard.workspace_id), Option.some)
          })
          : Option.none<ChatTarget>()
        const concurrency = yield* RunConcurrency

        const trace = (row: RunRow, who: string | null, messages: ReadonlyArray<{ role: string; content: string }>, result: Answer) =>
          Effect.gen(function*() {
            yield* traces.record({
              id: yield* ids.next,
              workspace_id: leaderboard.workspace_id,
              leaderboard_id: leaderboard.id,
              leaderboard_model_id: who,
              source: "run",
              run_id: runId,
              input: storableText(row.input),
              messages: messages.map((m) => ({ role: storableText(m.role), content: storableText(m.content) })),
              output: Result.isSuccess(result) && result.success.output !== null ? storableText(result.success.output) : null,
              status: Result.isSuccess(result) ? "success" : "error",
              error: Result.isFailure(result) ? storableText(result.failure.reason) : null,
              latency_ms: Result.isSuccess(result) ? result.success.latencyMs : result.failure.latency_ms,
              usage: Result.isSuccess(result) && result.success.usage !== null ? { ...result.success.usage } : null,
              cost_usd: Result.isSuccess(result) ? result.success.costUsd : null,
              token_id: null,
              created_at: yield* DateTime.now
            })
          })

        const askRow = (row: RunRow) =>
          Effect.gen(function*() {
            const save = (cell: Omit<Cell, "row_index" | "candidate_id">) =>
              Effect.flatMap(DateTime.now, (now) => runs.saveCell(runId, { ...cell, row_index: row.index, candidate_id: candidateId }, now))
            const none = { output: null, reason: null, latency_ms: null, cost_usd: null }
            if (Option.isNone(asker)) {
              return yield* save({ ...none, verdict: "incorrect", error: "the candidate was removed from the leaderboard" })
            }
            const prompt = buildMessages(row.prompt, leaderboard.challenge)
            if (Result.isFailure(prompt)) return yield* save({ ...none, verdict: null, error: prompt.failure.message })
            const answer = yield* complete(asker.value, { messages: prompt.success.messages })
            yield* trace(row, candidateId, prompt.success.messages, answer)
            if (Result.isFailure(answer)) {
              return yield* save({ ...none, verdict: "incorrect", error: storableText(answer.failure.reason), latency_ms: answer.failure.latency_ms })
            }
            const output = answer.success.output ?? ""
            const answered = { output: storableText(output), latency_ms: answer.success.latencyMs, cost_usd: answer.success.costUsd }
            if (run.eval_type === "exact") {
              return yield* save({
                ...answered,
                verdict: row.reference !== null && exactMatch(output, row.reference) ? "correct" : "incorrect",
                reason: null,
                error: null
              })
            }
            if (Option.isNone(judge)) return yield* save({ ...answered, verdict: null, reason: null, error: "judge: the leaderboard has no judge" })
            const ask = judgeRequest({ question: row.input, reference: row.reference, answer: output })
            const judged = yield* complete((request) => provider.complete(judge.value, request), {
              messages: ask.messages,
              response_format: ask.response_format
            })
            yield* trace(row, null, ask.messages, judged)
            if (Result.isFailure(judged)) {
              return yield* save({ ...answered, verdict: null, reason: null, error: storableText(`judge: ${judged.failure.reason}`) })
            }
            const verdict = parseJudgeReply(judged.success.output ?? "")
            return yield* Result.isFailure(verdict)
              ? save({ ...answered, verdict: null, reason: null, error: storableText(`judge: ${verdict.failure}`) })
              : save({ ...answered, verdict: verdict.success.verdict, reason: storableText(verdict.success.reason), error: null })
          })

        // a cancelled run stops between calls: its status is looked at twice a second meanwhile
        const cancelled = runs.status(runId).pipe(
          Effect.map((status) => Option.isNone(status) || status.value !== "running"),
          Effect.repeat({ until: (stop) => stop, schedule: Schedule.spaced("500 millis") }),
          Effect.asVoid
        )
        const gate = gateOf(runId, candidateId, concurrency)
        yield* Effect.raceFirst(
          Effect.forEach(rows, (row) => Semaphore.withPermit(gate, askRow(row)), { concurrency, discard: true }),
          cancelled
        )
      })

      const finish = Effect.fn("Runs.finish")(function*(runId: string) {
        const run = yield* runOf(runId)
        if (run.status !== "running") return
        const { candidates } = yield* leaderboardOf(run)
        const tallies = new Map((yield* runs.tallies(runId)).map((t) => [t.candidate_id, t]))
        const ranked = rank(run.model_ids.map((id) => {
          const tally = tallies.get(id)
          return {
            leaderboard_model_id: id,
            name: candidates.find((c) => c.id === id)?.name ?? id,
            correct: tally?.correct ?? 0,
            total: tally?.total ?? 0,
            latency_ms_p50: tally?.latency_ms_p50 ?? null,
            latency_ms_p95: tally?.latency_ms_p95 ?? null,
            total_cost_usd: tally?.total_cost_usd ?? null,
            errors: tally?.errors ?? 0
          }
        }))
        const winner = winnerOf(ranked)
        // the winner is recorded with the run's end (not if a cancel came first); this instance's copy
        // of the leaderboard is dropped at once, the others' when the database announces the change
        const ended = yield* runs.end(runId, { status: "succeeded", results: ranked, winner, error: null }, yield* DateTime.now)
        yield* dropGates(runId)
        if (ended && winner !== null) yield* repository.setRankingWinner(run.leaderboard_id as LeaderboardId, winner)
      })

      const fail = Effect.fn("Runs.fail")(function*(runId: string, error: string) {
        yield* runs.end(runId, { status: "failed", results: [], winner: null, error: storableText(error) }, yield* DateTime.now)
        yield* dropGates(runId)
      })

      const agreementOf = Effect.fn("Runs.agreement")(function*(principal: Principal, leaderboardId: LeaderboardId, runId: string) {
        const run = yield* visibleRun(principal, leaderboardId, runId)
        if (run.eval_type !== "judge") {
          return yield* new NotRunnable({ leaderboard_id: leaderboardId, message: "Agreement compares a judge's verdicts: this run scored exactly" })
        }
        return agreement(yield* humans.pairs(runId))
      })

      const describe = (runId: string) =>
        Effect.map(runOf(runId), (run) => ({ improve_dataset: run.improve_dataset, leaderboard_id: run.leaderboard_id }))

      return Runs.of({ start, list, get, results, cancel, agreement: agreementOf, describe, prepare, ask, finish, fail, requeue, runSchedules })
    })
  )
}
