import { DateTime, Effect, Random } from "effect"
import { DatasetRepository } from "../datasets/index.ts"
import type { Candidate, Leaderboard } from "../leaderboards/index.ts"
import { IdGenerator, RunId, storeThenEnqueue } from "../shared/index.ts"
import { maxSampleSeed, Run, runnable, type RunSource } from "./Run.ts"
import { RunQueue } from "./RunQueue.ts"
import { RunRepository } from "./RunRepository.ts"

export interface StartRequest {
  readonly model_ids?: ReadonlyArray<string> | undefined
  readonly run_source?: RunSource | undefined
  readonly improve_dataset?: boolean | undefined
  /** A seeded sample of the rows instead of all of them; without a seed the start draws one (recorded on the run). */
  readonly sample?: { readonly size: number; readonly seed?: number | undefined } | undefined
}

/**
 * What a person's start (Runs) and a due schedule (RunScheduler) share: checks the leaderboard can
 * run, then stores the queued run and enqueues it. Built inside each layer from the ports it needs.
 */
export const makeLaunch = Effect.gen(function*() {
  const runs = yield* RunRepository
  const queue = yield* RunQueue
  const datasets = yield* DatasetRepository
  const ids = yield* IdGenerator
  return Effect.fnUntraced(function*(leaderboard: Leaderboard, candidates: ReadonlyArray<Candidate>, request: StartRequest) {
    const leaderboardId = leaderboard.id
    const hasVersion = leaderboard.challenge.dataset_type === "PUSH"
      ? (yield* datasets.versions(leaderboardId)).length > 0
      : false
    const chosen = yield* Effect.fromResult(runnable(leaderboard, candidates, request.model_ids, hasVersion))
    const evalType = leaderboard.challenge.eval_type as "exact" | "judge"
    const sample = request.sample === undefined
      ? null
      : { size: request.sample.size, seed: request.sample.seed ?? (yield* Random.nextIntBetween(0, maxSampleSeed)) }
    const run = new Run({
      id: yield* ids.make(RunId),
      leaderboard_id: leaderboardId,
      workspace_id: leaderboard.workspace_id,
      status: "queued",
      run_source: request.run_source ?? "manual",
      eval_type: evalType,
      model_ids: chosen.map((c) => c.id),
      improve_dataset: request.improve_dataset ?? false,
      sample,
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
})
