import { DateTime, Effect, Result, Schema } from "effect"
import { maxDatasetFileRows } from "../datasets/index.ts"
import type { PromptInput } from "../inference/index.ts"
import {
  type Candidate,
  type Leaderboard,
  LeaderboardArchived,
  LeaderboardId,
  ServingDecision,
  ServingDifference
} from "../leaderboards/index.ts"
import { InvalidInput, RunId, WorkspaceId } from "../shared/index.ts"
import { DatasetMissing, NotRunnable } from "./RunErrors.ts"
import { judgeModelOf } from "./Scoring.ts"

export const RunStatus = Schema.Literals(["queued", "running", "succeeded", "failed", "cancelled"])
export type RunStatus = typeof RunStatus.Type
export const RunSource = Schema.Literals(["manual", "schedule"])
export type RunSource = typeof RunSource.Type

/** A run that has not ended holds its leaderboard: one at a time. */
export const isActive = (status: RunStatus) => status === "queued" || status === "running"

/** One candidate's tally, scored and ranked (ranking rules: Ranking.ts). */
export const CandidateResult = Schema.Struct({
  leaderboard_model_id: Schema.String,
  name: Schema.String,
  correct: Schema.Int,
  total: Schema.Int,
  score: Schema.NullOr(Schema.Number),
  score_low: Schema.NullOr(Schema.Number),
  score_high: Schema.NullOr(Schema.Number),
  rank: Schema.Int,
  latency_ms_p50: Schema.NullOr(Schema.Number),
  latency_ms_p95: Schema.NullOr(Schema.Number),
  total_cost_usd: Schema.NullOr(Schema.Number),
  errors: Schema.Int,
  /**
   * The paired comparison's view of the candidate (absent on runs that ended before it was made):
   * the candidates whose Holm-adjusted p against it is at least the serving policy's alpha, and its
   * rank band (best: 1 + those significantly better; worst: candidates − those significantly worse).
   */
  statistically_tied_with: Schema.optionalKey(Schema.Array(Schema.String)),
  rank_band: Schema.optionalKey(Schema.Struct({ best: Schema.Int, worst: Schema.Int })),
  /** Rows with a verdict, compared in pairs; `excluded_rows` those without (judge error, failed call, unscorable). */
  scored_rows: Schema.optionalKey(Schema.Int),
  excluded_rows: Schema.optionalKey(Schema.Int)
})
export type CandidateResult = typeof CandidateResult.Type

/**
 * Two candidates on the rows both have a verdict for: `wins` counts rows `a` got right and `b` wrong,
 * `losses` the reverse, `ties` the rest; `p_value` is the exact McNemar test, `p_adjusted` Holm's over
 * every pair of the run, `difference` a's score minus b's with Newcombe's 95% interval (null: no row shared).
 */
export const PairwiseResult = Schema.Struct({
  a: Schema.String,
  b: Schema.String,
  shared_rows: Schema.Int,
  wins: Schema.Int,
  losses: Schema.Int,
  ties: Schema.Int,
  p_value: Schema.Number,
  p_adjusted: Schema.Number,
  difference: Schema.NullOr(ServingDifference)
})
export type PairwiseResult = typeof PairwiseResult.Type

/** Cells: rows × candidates; `completed` counts every answered cell, `failed` those with an error. */
export const RunProgress = Schema.Struct({ total: Schema.Int, completed: Schema.Int, failed: Schema.Int })
export type RunProgress = typeof RunProgress.Type

/** Largest seed a run's sample takes: seeds are integers in 0 … 2^31-1. */
export const maxSampleSeed = 2 ** 31 - 1

/**
 * A sample a run was asked for: `size` rows (at most the 100,000 a dataset holds; all of them when
 * the dataset has fewer) chosen by `seed`, an integer in 0 … 2^31-1 that seeds mulberry32 (a seeded
 * Fisher–Yates over the usable rows in dataset order; the sample keeps that order). The same size and
 * seed on the same dataset version (and the same improved references) choose the same rows.
 */
export const RunSample = Schema.Struct({
  size: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: maxDatasetFileRows })),
  seed: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: maxSampleSeed }))
})
export type RunSample = typeof RunSample.Type

/** Where the run's rows came from, fixed when the run starts. */
export const RunDataset = Schema.Struct({
  dataset_type: Schema.Literals(["GET", "PUSH"]),
  url: Schema.NullOr(Schema.String),
  version: Schema.NullOr(Schema.Int),
  /** Usable rows the source had (rows without an input are skipped; exact runs skip rows without a reference). */
  available_rows: Schema.Int,
  skipped_rows: Schema.Int,
  /** Rows whose reference is improve-dataset's (the latest derived version's), not the dataset's own. */
  improved_rows: Schema.optionalKey(Schema.Int),
  /** Rows the run asks: all available, or a sample of `max_samples_to_gather` of them. */
  rows: Schema.Int,
  /** The sample's seed when the rows are a sample: the same seed on the same rows picks the same sample. */
  seed: Schema.NullOr(Schema.String),
  /** The run's requested sample the rows were chosen by (also when its size covered every row). */
  sample: Schema.optionalKey(RunSample)
})
export type RunDataset = typeof RunDataset.Type

export class Run extends Schema.Class<Run>("Run")({
  id: RunId,
  leaderboard_id: LeaderboardId,
  workspace_id: WorkspaceId,
  status: RunStatus,
  run_source: RunSource,
  eval_type: Schema.Literals(["exact", "judge"]),
  /** The candidates the run asks (all of the leaderboard's when the request named none). */
  model_ids: Schema.Array(Schema.String),
  improve_dataset: Schema.Boolean,
  /** The sample the run was asked for, its seed drawn at the start when the request gave none; null: no sample asked. */
  sample: Schema.NullOr(RunSample).pipe(Schema.withConstructorDefault(Effect.succeed(null))),
  progress: RunProgress,
  results: Schema.Array(CandidateResult),
  winner_leaderboard_model_id: Schema.NullOr(Schema.String),
  /** Every pair of candidates compared on their shared rows; null until the run succeeded. */
  pairwise: Schema.NullOr(Schema.Array(PairwiseResult)).pipe(Schema.withConstructorDefault(Effect.succeed(null))),
  /** What the run decided about who serves; null until the run succeeded. */
  serving_decision: Schema.NullOr(ServingDecision).pipe(Schema.withConstructorDefault(Effect.succeed(null))),
  dataset: Schema.NullOr(RunDataset),
  error: Schema.NullOr(Schema.String),
  created_at: Schema.DateTimeUtc,
  started_at: Schema.NullOr(Schema.DateTimeUtc),
  finished_at: Schema.NullOr(Schema.DateTimeUtc)
}) {}

/** The Run object of the contract. */
export const runView = (run: Run) => ({
  id: run.id,
  leaderboard_id: run.leaderboard_id,
  status: run.status,
  run_source: run.run_source,
  eval_type: run.eval_type,
  model_ids: run.model_ids,
  improve_dataset: run.improve_dataset,
  sample: run.sample,
  progress: run.progress,
  results: run.results,
  winner_leaderboard_model_id: run.winner_leaderboard_model_id,
  pairwise: run.pairwise,
  serving_decision: run.serving_decision,
  dataset: run.dataset,
  error: run.error,
  created_at: DateTime.formatIso(run.created_at),
  started_at: run.started_at === null ? null : DateTime.formatIso(run.started_at),
  finished_at: run.finished_at === null ? null : DateTime.formatIso(run.finished_at)
})
export type RunView = ReturnType<typeof runView>

/** One row a run asks every candidate: its prompt input and reference, fixed when the run starts. */
export interface RunRow {
  readonly index: number
  readonly prompt: PromptInput
  /** The input as text (a `messages` input: its last user message), for results and judges. */
  readonly input: string
  readonly reference: string | null
}

/** What one (row, candidate) cell came to. `verdict` null: no verdict (the judge failed). */
export interface Cell {
  readonly row_index: number
  readonly candidate_id: string
  readonly output: string | null
  readonly verdict: "correct" | "incorrect" | null
  readonly reason: string | null
  readonly error: string | null
  readonly latency_ms: number | null
  readonly cost_usd: number | null
}

const canonical = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(canonical)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]))
    : value

/**
 * The key an improved reference is stored under: the row's input as a run asks it, as JSON with
 * sorted keys (so the same input read back from storage, in another key order, has the same key).
 */
export const inputKey = (row: Pick<RunRow, "prompt">): string => JSON.stringify(canonical(row.prompt))

/**
 * Whether the leaderboard can run now, and whom the run asks: the candidates in `modelIds` (all,
 * when it names none; one that is not a candidate is invalid). Human leaderboards are scored by
 * reviewers; a judge leaderboard needs its judge; a GET dataset its URL, a PUSH one a version.
 */
export const runnable = (
  leaderboard: Pick<Leaderboard, "id" | "status" | "challenge">,
  candidates: ReadonlyArray<Candidate>,
  modelIds: ReadonlyArray<string> | undefined,
  hasVersion: boolean
): Result.Result<ReadonlyArray<Candidate>, LeaderboardArchived | NotRunnable | InvalidInput | DatasetMissing> => {
  const leaderboard_id = leaderboard.id
  const { dataset_type, dataset_url, eval_type } = leaderboard.challenge
  if (leaderboard.status === "archived") return Result.fail(new LeaderboardArchived({ leaderboard_id }))
  if (eval_type === "human") {
    return Result.fail(new NotRunnable({ leaderboard_id, message: "A human leaderboard is scored by its reviewers: use its cases, not runs" }))
  }
  if (eval_type === "judge" && judgeModelOf(leaderboard.challenge)._tag === "None") {
    return Result.fail(new NotRunnable({ leaderboard_id, message: "A judge leaderboard needs judge_provider (router or hub) and judge_model" }))
  }
  const unknown = (modelIds ?? []).find((id) => !candidates.some((c) => c.id === id))
  if (unknown !== undefined) {
    return Result.fail(new InvalidInput({ message: `${unknown} is not a candidate of this leaderboard`, path: ["model_ids"] }))
  }
  const chosen = modelIds === undefined || modelIds.length === 0 ? candidates : candidates.filter((c) => modelIds.includes(c.id))
  if (chosen.length === 0) return Result.fail(new NotRunnable({ leaderboard_id, message: "Add a candidate model before running" }))
  if (dataset_type === "GET" && (dataset_url === null || dataset_url.trim() === "")) {
    return Result.fail(new DatasetMissing({ leaderboard_id, message: "Set dataset_url, then run" }))
  }
  if (dataset_type === "PUSH" && !hasVersion) {
    return Result.fail(new DatasetMissing({ leaderboard_id, message: "Push rows and consolidate them into a dataset version, then run" }))
  }
  return Result.succeed(chosen)
}
