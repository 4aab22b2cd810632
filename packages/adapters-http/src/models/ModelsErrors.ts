import { Effect, Schema } from "effect"
import type * as Models from "@podium/domain/models"
import { apiError, ErrorClass, type ErrorAnswers } from "../api/Errors.ts"

// The HTTP errors of models: assignment to a leaderboard, fine-tunes and deployments.

const LeaderboardDetails = Schema.Struct({ leaderboard_id: Schema.String })
const ModelDetails = Schema.Struct({ model_id: Schema.String })

export class LeaderboardDatasetMinRowsRequired extends ErrorClass<LeaderboardDatasetMinRowsRequired>()(
  "LeaderboardDatasetMinRowsRequired",
  409,
  "leaderboard_dataset_min_rows_required",
  LeaderboardDetails
) {}
export class LeaderboardRunningAssignmentBlocked extends ErrorClass<LeaderboardRunningAssignmentBlocked>()(
  "LeaderboardRunningAssignmentBlocked",
  409,
  "leaderboard_running_assignment_blocked",
  LeaderboardDetails
) {}
export class NoSuccessfulFineTune extends ErrorClass<NoSuccessfulFineTune>()(
  "NoSuccessfulFineTune",
  409,
  "no_successful_fine_tune",
  ModelDetails
) {}
export class BaseModelUnavailable extends ErrorClass<BaseModelUnavailable>()(
  "BaseModelUnavailable",
  409,
  "base_model_unavailable",
  ModelDetails
) {}
export class FineTuneInProgress extends ErrorClass<FineTuneInProgress>()(
  "FineTuneInProgress",
  409,
  "fine_tune_in_progress",
  Schema.Struct({ run_id: Schema.String })
) {}
export class VersionDeployed extends ErrorClass<VersionDeployed>()(
  "VersionDeployed",
  409,
  "version_deployed",
  Schema.Struct({ version_id: Schema.String, status: Schema.String })
) {}
export class VersionNotDeployed extends ErrorClass<VersionNotDeployed>()(
  "VersionNotDeployed",
  409,
  "version_not_deployed",
  Schema.Struct({ version_id: Schema.String, status: Schema.String })
) {}
export class NoTrainingData extends ErrorClass<NoTrainingData>()("NoTrainingData", 409, "no_training_data", ModelDetails) {}

/**
 * Models' domain errors as contract errors; `TrainingFailed` and `FineTuningFailed` are the
 * fine-tune workflow's, which fail the run instead.
 */
export const modelsErrors = {
  AssignmentRejected: (
    e
  ): Effect.Effect<never, LeaderboardDatasetMinRowsRequired | LeaderboardRunningAssignmentBlocked> =>
    Effect.fail(
      e.reason === "min_rows"
        ? apiError(LeaderboardDatasetMinRowsRequired, e.message, { leaderboard_id: e.leaderboard_id })
        : apiError(LeaderboardRunningAssignmentBlocked, e.message, { leaderboard_id: e.leaderboard_id })
    ),
  NoSuccessfulFineTune: (e) => Effect.fail(apiError(NoSuccessfulFineTune, e.message, { model_id: e.model_id })),
  BaseModelUnavailable: (e) => Effect.fail(apiError(BaseModelUnavailable, e.message, { model_id: e.model_id })),
  FineTuneInProgress: (e) =>
    Effect.fail(apiError(FineTuneInProgress, `Fine-tune ${e.run_id} of this model has not ended: one at a time`, {
      run_id: e.run_id
    })),
  VersionDeployed: (e) =>
    Effect.fail(apiError(VersionDeployed, `The version is ${e.status} already`, {
      version_id: e.version_id,
      status: e.status
    })),
  VersionNotDeployed: (e) =>
    Effect.fail(apiError(VersionNotDeployed, `The version's deployment is ${e.status}, not active`, {
      version_id: e.version_id,
      status: e.status
    })),
  NoTrainingData: (e) => Effect.fail(apiError(NoTrainingData, e.message, { model_id: e.model_id }))
} satisfies ErrorAnswers<typeof Models, "TrainingFailed" | "FineTuningFailed">
