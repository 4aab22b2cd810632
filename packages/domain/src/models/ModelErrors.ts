import { Schema } from "effect"

/**
 * A leaderboard a model cannot be assigned: `min_rows` when its dataset is not a PUSH dataset with
 * 100 consolidated rows nor a hub dataset of 100 rows; `running` while it runs.
 */
export class AssignmentRejected extends Schema.TaggedError<AssignmentRejected>()("AssignmentRejected", {
  leaderboard_id: Schema.String,
  reason: Schema.Literals(["min_rows", "running"]),
  message: Schema.String
}) {}

/** Continuous learning, or inference, before the model's first successful fine-tune. */
export class NoSuccessfulFineTune extends Schema.TaggedError<NoSuccessfulFineTune>()("NoSuccessfulFineTune", {
  model_id: Schema.String,
  message: Schema.String
}) {}

/** A fine-tune needs a base model (`selected_base_model_version_id`) that the catalogue offers. */
export class BaseModelUnavailable extends Schema.TaggedError<BaseModelUnavailable>()("BaseModelUnavailable", {
  model_id: Schema.String,
  message: Schema.String
}) {}

/** A model fine-tunes one run at a time. */
export class FineTuneInProgress extends Schema.TaggedError<FineTuneInProgress>()("FineTuneInProgress", {
  model_id: Schema.String,
  run_id: Schema.String
}) {}

/** A fine-tune needs at least one assigned leaderboard to learn from. */
export class NoTrainingData extends Schema.TaggedError<NoTrainingData>()("NoTrainingData", {
  model_id: Schema.String,
  message: Schema.String
}) {}

/** Training could not go on: too few rows to learn from, or the remote job failed. The run fails with the reason. */
export class TrainingFailed extends Schema.TaggedError<TrainingFailed>()("TrainingFailed", {
  run_id: Schema.String,
  reason: Schema.String
}) {}

/** A version that is deploying or deployed is not deployed again. */
export class VersionDeployed extends Schema.TaggedError<VersionDeployed>()("VersionDeployed", {
  version_id: Schema.String,
  status: Schema.String
}) {}

/** Only a version whose deployment is active can be stopped. */
export class VersionNotDeployed extends Schema.TaggedError<VersionNotDeployed>()("VersionNotDeployed", {
  version_id: Schema.String,
  status: Schema.String
}) {}
