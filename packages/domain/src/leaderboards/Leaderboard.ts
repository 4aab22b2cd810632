import { Result, Schema } from "effect"
import { InvalidInput, WorkspaceId } from "../shared/index.ts"

export const LeaderboardId = Schema.String.check(Schema.isUUID()).pipe(Schema.brand("LeaderboardId"))
export type LeaderboardId = typeof LeaderboardId.Type

export const CandidateId = Schema.String.check(Schema.isUUID()).pipe(Schema.brand("CandidateId"))
export type CandidateId = typeof CandidateId.Type

export const DatasetType = Schema.Literals(["GET", "PUSH"])
export const EvalType = Schema.Literals(["exact", "judge", "human"])
export const ChosenModelStrategy = Schema.Literals(["ranking_winner", "manual"])

/**
 * `active` (default); `running` while a run is in progress (set by the service only); `paused`
 * (schedules and push ingestion stop, inference continues); `archived` (read-only).
 */
export const LeaderboardStatus = Schema.Literals(["active", "running", "paused", "archived"])
export type LeaderboardStatus = typeof LeaderboardStatus.Type
export const SettableStatus = Schema.Literals(["active", "paused", "archived"])

/** The evaluation task of a leaderboard. */
export const Challenge = Schema.Struct({
  system_prompt: Schema.NullOr(Schema.String),
  model_prompt: Schema.NullOr(Schema.String),
  eval_type: EvalType,
  judge_provider: Schema.NullOr(Schema.String),
  judge_model: Schema.NullOr(Schema.String),
  dataset_type: DatasetType,
  dataset_url: Schema.NullOr(Schema.String),
  auto_limit_size: Schema.Boolean,
  max_samples_to_gather: Schema.NullOr(Schema.Int),
  daily_event_limit: Schema.NullOr(Schema.Int),
  monthly_event_limit: Schema.NullOr(Schema.Int),
  consolidate_every_events: Schema.NullOr(Schema.Int),
  consolidate_every_hours: Schema.NullOr(Schema.Int),
  dedupe: Schema.Boolean,
  end_date: Schema.NullOr(Schema.String)
})
export type Challenge = typeof Challenge.Type

export class Leaderboard extends Schema.Class<Leaderboard>("Leaderboard")({
  id: LeaderboardId,
  workspace_id: WorkspaceId,
  name: Schema.String,
  description: Schema.String,
  status: LeaderboardStatus,
  chosen_model_strategy: ChosenModelStrategy,
  chosen_leaderboard_model_id: Schema.NullOr(CandidateId),
  schedule: Schema.Record(Schema.String, Schema.Unknown),
  challenge: Challenge,
  /** Properties clients sent that the service does not know; kept and returned (open object). */
  extra: Schema.Record(Schema.String, Schema.Unknown),
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc
}) {}

const httpUrl = /^https?:\/\/[^\s/]+/

/**
 * A GET dataset is fetched from its URL, so a URL given must be http(s). It may be missing at
 * create (set it later); a run without a usable dataset is 409 `dataset_missing`.
 */
export const checkDataset = (challenge: Pick<Challenge, "dataset_type" | "dataset_url">): Result.Result<void, InvalidInput> =>
  challenge.dataset_type === "GET" && challenge.dataset_url !== null && !httpUrl.test(challenge.dataset_url)
    ? Result.fail(new InvalidInput({
      message: "A GET dataset's dataset_url must be an http(s) URL",
      path: ["dataset_url"]
    }))
    : Result.void

/** `manual` serving needs a chosen candidate, and a chosen candidate must belong to the leaderboard. */
export const checkChoice = (
  leaderboard: Pick<Leaderboard, "chosen_model_strategy" | "chosen_leaderboard_model_id">,
  candidates: ReadonlyArray<CandidateId>
): Result.Result<void, InvalidInput> => {
  const chosen = leaderboard.chosen_leaderboard_model_id
  if (chosen !== null && !candidates.includes(chosen)) {
    return Result.fail(new InvalidInput({
      message: "chosen_leaderboard_model_id must be a candidate of this leaderboard",
      path: ["chosen_leaderboard_model_id"]
    }))
  }
  if (leaderboard.chosen_model_strategy === "manual" && chosen === null) {
    return Result.fail(new InvalidInput({
      message: "The manual strategy needs a chosen_leaderboard_model_id",
      path: ["chosen_leaderboard_model_id"]
    }))
  }
  return Result.void
}

export class LeaderboardArchived extends Schema.TaggedError<LeaderboardArchived>()("LeaderboardArchived", {
  leaderboard_id: Schema.String
}) {}

/**
 * Status changes a client may make: between active, paused and archived, never into or out of
 * `running` (the service owns that); an archived leaderboard accepts nothing but a status change.
 */
export const checkUpdate = (
  current: Pick<Leaderboard, "id" | "status">,
  update: { readonly status?: string | undefined; readonly changesOtherFields: boolean }
): Result.Result<void, InvalidInput | LeaderboardArchived> => {
  if (update.status === "running") {
    return Result.fail(new InvalidInput({ message: "status running is set by the service", path: ["status"] }))
  }
  if (current.status === "archived" && update.changesOtherFields) {
    return Result.fail(new LeaderboardArchived({ leaderboard_id: current.id }))
  }
  return Result.void
}
