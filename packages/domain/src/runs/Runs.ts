import { Context, DateTime, Effect, Layer, Option } from "effect"
import type { Principal } from "../access/index.ts"
import { LeaderboardArchived, type LeaderboardId, Leaderboards } from "../leaderboards/index.ts"
import { InvalidInput, NotFound, type RunId } from "../shared/index.ts"
import { isActive, type Run } from "./Run.ts"
import { type Agreement, agreement } from "./Agreement.ts"
import { HumanVerdicts } from "./HumanVerdicts.ts"
import { DatasetMissing, NotRunnable, RunEnded, RunInProgress } from "./RunErrors.ts"
import { makeLaunch, type StartRequest } from "./RunLaunch.ts"
import { type ResultRow, RunRepository } from "./RunRepository.ts"

export type { StartRequest } from "./RunLaunch.ts"

/**
 * Runs: every chosen candidate asked every row of the leaderboard's dataset, each answer scored
 * (exact or by the judge model), the candidates ranked and the winner served under
 * `ranking_winner`. This is what the handlers call; a run is a durable job (RunQueue) whose steps
 * are RunSteps', and due schedules are RunScheduler's.
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
  readonly get: (principal: Principal, leaderboardId: LeaderboardId, runId: RunId) => Effect.Effect<Run, NotFound>
  readonly results: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    runId: RunId,
    page: { readonly limit: number; readonly offset: number }
  ) => Effect.Effect<{ readonly run: Run; readonly rows: ReadonlyArray<ResultRow> }, NotFound>
  readonly cancel: (principal: Principal, leaderboardId: LeaderboardId, runId: RunId) => Effect.Effect<Run, NotFound | RunEnded>
  /** How far the run's judge agrees with people who judged the same answers (judge runs only). */
  readonly agreement: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    runId: RunId
  ) => Effect.Effect<Agreement, NotFound | NotRunnable>
}>()("@podium/domain/runs/Runs") {
  static readonly layer = Layer.effect(
    Runs,
    Effect.gen(function*() {
      const runs = yield* RunRepository
      const leaderboards = yield* Leaderboards
      const humans = yield* HumanVerdicts
      const launch = yield* makeLaunch

      const start = Effect.fn("Runs.start")(function*(principal: Principal, leaderboardId: LeaderboardId, request: StartRequest) {
        const { candidates, leaderboard } = yield* leaderboards.get(principal, leaderboardId)
        return yield* launch(leaderboard, candidates, request)
      })

      const visibleRun = Effect.fnUntraced(function*(principal: Principal, leaderboardId: LeaderboardId, runId: RunId) {
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

      const get = Effect.fn("Runs.get")(function*(principal: Principal, leaderboardId: LeaderboardId, runId: RunId) {
        return yield* visibleRun(principal, leaderboardId, runId)
      })

      const results = Effect.fn("Runs.results")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        runId: RunId,
        page: { readonly limit: number; readonly offset: number }
      ) {
        const run = yield* visibleRun(principal, leaderboardId, runId)
        return { run, rows: yield* runs.results(runId, page) }
      })

      const cancel = Effect.fn("Runs.cancel")(function*(principal: Principal, leaderboardId: LeaderboardId, runId: RunId) {
        const run = yield* visibleRun(principal, leaderboardId, runId)
        if (!isActive(run.status)) return yield* new RunEnded({ run_id: runId, status: run.status })
        const ended = yield* runs.end(runId, { status: "cancelled", results: [], winner: null, error: null }, yield* DateTime.now)
        const now = yield* visibleRun(principal, leaderboardId, runId)
        if (!ended && now.status !== "cancelled") return yield* new RunEnded({ run_id: runId, status: now.status })
        return now
      })
      const agreementOf = Effect.fn("Runs.agreement")(function*(principal: Principal, leaderboardId: LeaderboardId, runId: RunId) {
        const run = yield* visibleRun(principal, leaderboardId, runId)
        if (run.eval_type !== "judge") {
          return yield* new NotRunnable({ leaderboard_id: leaderboardId, message: "Agreement compares a judge's verdicts: this run scored exactly" })
        }
        return agreement(yield* humans.pairs(runId))
      })

      return Runs.of({ start, list, get, results, cancel, agreement: agreementOf })
    })
  )
}
