import { Schema } from "effect"

/** A leaderboard runs one run at a time. */
export class RunInProgress extends Schema.TaggedError<RunInProgress>()("RunInProgress", {
  leaderboard_id: Schema.String,
  run_id: Schema.String
}) {}

/** No usable dataset: a GET leaderboard without `dataset_url`, a PUSH one without a version yet. */
export class DatasetMissing extends Schema.TaggedError<DatasetMissing>()("DatasetMissing", {
  leaderboard_id: Schema.String,
  message: Schema.String
}) {}

/** Runs score exact and judge leaderboards; human ones are scored by reviewers. */
export class NotRunnable extends Schema.TaggedError<NotRunnable>()("NotRunnable", {
  leaderboard_id: Schema.String,
  message: Schema.String
}) {}

/** Cancel of a run that has ended. */
export class RunEnded extends Schema.TaggedError<RunEnded>()("RunEnded", {
  run_id: Schema.String,
  status: Schema.String
}) {}
