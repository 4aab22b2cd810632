import { Context, DateTime, Duration, Effect, Layer, Option, Random, Result, Schedule, Semaphore } from "effect"
import {
  buildMessages,
  CandidateCalls,
  type ChatCompletion,
  type ChatProviderFailed,
  type ChatTarget,
  type ChatRequest,
  ChatTargets,
  type Send
} from "../inference/index.ts"
import {
  type Candidate,
  type Leaderboard,
  type LeaderboardId,
  LeaderboardRepository,
  ServingEntryId,
  ServingHistory,
  ServingHistoryEntry,
  servingCandidateId,
  servingPolicyOf
} from "../leaderboards/index.ts"
import { IdGenerator, type RunId, storableText } from "../shared/index.ts"
import { rank, winnerOf } from "./Ranking.ts"
import { type Cell, inputKey, type Run, type RunDataset, type RunRow } from "./Run.ts"
import { DatasetUnavailable } from "./RunDatasetSource.ts"
import { RunDatasets } from "./RunDatasets.ts"
import { ImprovementRepository } from "./ImprovementRepository.ts"
import { chooseRows, mapRows } from "./RunRows.ts"
import type { DatasetMissing } from "./RunErrors.ts"
import { RunRepository } from "./RunRepository.ts"
import { exactMatch, judgeModelOf, judgeRequest, parseJudgeReply } from "./Scoring.ts"
import { answeredCalls, pairedEvidence, runServingDecision } from "./ServingEvidence.ts"

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

/**
 * A run's steps, which only its durable workflow (RunQueue's) calls, each safe to repeat: `prepare`
 * fixes the rows, `ask` has a candidate answer a chunk of them (each answer scored, exactly or by
 * the judge model), `finish` ranks the candidates and decides on paired evidence who serves under `ranking_winner`.
 */
export class RunSteps extends Context.Service<RunSteps, {
  /** What the run's steps need to know of it. */
  readonly describe: (runId: RunId) => Effect.Effect<{ readonly improve_dataset: boolean; readonly leaderboard_id: LeaderboardId }>
  /** Step 1: fixes the run's rows (fetched or read now) and marks it running; answers how many, and who is asked. */
  readonly prepare: (
    runId: RunId
  ) => Effect.Effect<{ readonly rows: number; readonly model_ids: ReadonlyArray<string> }, DatasetUnavailable | DatasetMissing>
  /** Step 2, per candidate and chunk of rows: asks the rows in [from, to) the candidate has not answered. */
  readonly ask: (runId: RunId, candidateId: string, from: number, to: number) => Effect.Effect<void>
  /**
   * Step 3: ranks, compares the candidates in pairs, decides on that evidence whether the ranking's
   * serving candidate changes (the leaderboard's serving policy) and ends the run; the decision is
   * recorded in the leaderboard's serving history once, by the attempt that ended the run.
   */
  readonly finish: (runId: RunId) => Effect.Effect<void>
  readonly fail: (runId: RunId, error: string) => Effect.Effect<void>
}>()("@podium/domain/runs/RunSteps") {
  static readonly layer = Layer.effect(
    RunSteps,
    Effect.gen(function*() {
      const runs = yield* RunRepository
      const repository = yield* LeaderboardRepository
      const datasetRows = yield* RunDatasets
      const improvements = yield* ImprovementRepository
      const targets = yield* ChatTargets
      const calls = yield* CandidateCalls
      const history = yield* ServingHistory
      const ids = yield* IdGenerator

      const judgeOf = (leaderboard: Leaderboard) => judgeModelOf(leaderboard.challenge)

      const runOf = (runId: RunId) =>
        Effect.flatMap(runs.find(runId), Option.match({
          onNone: () => Effect.die(new Error(`run ${runId} is gone`)),
          onSome: Effect.succeed
        }))

      const leaderboardOf = (run: Run) =>
        Effect.flatMap(repository.findServing(run.leaderboard_id), Option.match({
          onNone: () => Effect.die(new Error(`the leaderboard of run ${run.id} is gone`)),
          onSome: Effect.succeed
        }))

      const prepare = Effect.fn("RunSteps.prepare")(function*(runId: RunId) {
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
        // a requested sample's seed alone chooses (the same rows on every run); the leaderboard's sample draws one per run
        const seed = run.sample?.seed ?? `${run.id}:${yield* Random.nextIntBetween(0, 2 ** 31 - 1)}`
        const { available, rows, sampled } = chooseRows(withImproved, {
          exact: run.eval_type === "exact",
          sample: run.sample?.size ?? (auto_limit_size && max_samples_to_gather !== null ? max_samples_to_gather : null),
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
          seed: sampled ? String(seed) : null,
          ...(run.sample === null ? {} : { sample: run.sample })
        }
        yield* runs.start(runId, dataset, rows, yield* DateTime.now)
        return { rows: rows.length, model_ids: run.model_ids }
      })

      /**
       * How the candidate is asked (CandidateCalls): over chat completions at its own prices, else
       * (for router models) the router's catalogue; a Service candidate by its model's deployed version.
       */
      const askerOf = (candidate: Candidate, leaderboard: Leaderboard, credentials: ReadonlyMap<string, string>) =>
        Effect.map(calls.candidate(candidate, leaderboard.workspace_id, credentials), (call) => call.send)

      const complete = (send: Send, request: ChatRequest) =>
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
      const gateOf = (runId: RunId, candidateId: string, permits: number) => {
        const key = `${runId}:${candidateId}`
        let gate = gates.get(key)
        if (gate === undefined) gates.set(key, gate = Semaphore.makeUnsafe(permits))
        return gate
      }
      const dropGates = (runId: RunId) =>
        Effect.sync(() => {
          for (const key of gates.keys()) if (key.startsWith(`${runId}:`)) gates.delete(key)
        })

      const ask = Effect.fn("RunSteps.ask")(function*(runId: RunId, candidateId: string, from: number, to: number) {
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
          calls.trace({
            workspace_id: leaderboard.workspace_id,
            leaderboard_id: leaderboard.id,
            leaderboard_model_id: who,
            platform: who === null ? "judge" : candidate?.platform,
            source: "run",
            run_id: runId,
            input: row.input,
            messages,
            token_id: null
          }, result)

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
            const judged = yield* complete(calls.target(judge.value), {
              messages: ask.messages,
              temperature: ask.temperature,
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

      const finish = Effect.fn("RunSteps.finish")(function*(runId: RunId) {
        const run = yield* runOf(runId)
        if (run.status !== "running") return
        const { candidates, leaderboard, ranking_winner } = yield* leaderboardOf(run)
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
        const policy = servingPolicyOf(leaderboard)
        const cells = yield* runs.verdicts(runId)
        const evidence = pairedEvidence(ranked, cells, policy.alpha)
        // what the ranking serves now (before any ranking: the chosen candidate, else the only one)
        const serving = servingCandidateId({ ...leaderboard, chosen_model_strategy: "ranking_winner" }, candidates, ranking_winner)
        const nameOf = (id: string | null) => candidates.find((c) => c.id === id)?.name ?? null
        const manual = leaderboard.chosen_model_strategy === "manual"
        const decision = runServingDecision({
          policy,
          serving,
          servingName: nameOf(serving),
          // a candidate removed from the leaderboard while the run asked it cannot serve
          evidence: { ...evidence, results: evidence.results.filter((r) => nameOf(r.leaderboard_model_id) !== null) },
          answered: answeredCalls(cells),
          manualChoice: manual ? { name: nameOf(leaderboard.chosen_leaderboard_model_id) ?? "none chosen" } : null
        })
        const changes = decision.action === "first" || decision.action === "switch"
        const now = yield* DateTime.now
        // the decision is recorded with the run's end and serves only then (not if a cancel came first);
        // this instance's copy of the leaderboard is dropped at once, the others' when the database announces it
        const ended = yield* runs.end(runId, {
          status: "succeeded",
          results: evidence.results,
          winner,
          error: null,
          serving: changes ? decision.to_candidate_id : null,
          pairwise: evidence.pairwise,
          serving_decision: decision
        }, now)
        yield* dropGates(runId)
        if (!ended) return
        // a kept candidate that served without being recorded (the only one, or the chosen one) is
        // recorded too: a candidate added later challenges it rather than finding nothing serving
        if (decision.to_candidate_id !== null && decision.to_candidate_id !== ranking_winner) {
          yield* repository.setRankingWinner(run.leaderboard_id, decision.to_candidate_id)
        }
        if (decision.action === "none") return
        const candidateId = (id: string | null) => candidates.find((c) => c.id === id)?.id ?? null
        // under `manual` the chosen candidate serves before and after: the ranking's decision is the evidence
        const manualChoice = candidateId(leaderboard.chosen_leaderboard_model_id)
        yield* history.append(new ServingHistoryEntry({
          id: yield* ids.make(ServingEntryId),
          workspace_id: leaderboard.workspace_id,
          leaderboard_id: leaderboard.id,
          at: now,
          kind: "run",
          from_candidate_id: manual ? manualChoice : candidateId(decision.from_candidate_id),
          to_candidate_id: manual ? manualChoice : candidateId(decision.to_candidate_id),
          actor: { type: "system", id: "run", run_id: runId },
          evidence: { ...decision },
          reason: decision.reason
        }))
      })

      const fail = Effect.fn("RunSteps.fail")(function*(runId: RunId, error: string) {
        yield* runs.end(runId, { status: "failed", results: [], winner: null, error: storableText(error) }, yield* DateTime.now)
        yield* dropGates(runId)
      })

      const describe = (runId: RunId) =>
        Effect.map(runOf(runId), (run) => ({ improve_dataset: run.improve_dataset, leaderboard_id: run.leaderboard_id }))

      return RunSteps.of({ describe, prepare, ask, finish, fail })
    })
  )
}
