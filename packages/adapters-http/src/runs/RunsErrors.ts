import { Effect, Schema } from "effect"
import type * as Runs from "@podium/domain/runs"
import { apiError, ErrorClass, type ErrorAnswers } from "../api/Errors.ts"

// The HTTP errors of runs and of auto-selection.

export class RunInProgress extends ErrorClass<RunInProgress>()(
  "RunInProgress",
  409,
  "run_in_progress",
  Schema.Struct({ run_id: Schema.String })
) {}
export class DatasetMissing extends ErrorClass<DatasetMissing>()("DatasetMissing", 409, "dataset_missing") {}
export class NotRunnable extends ErrorClass<NotRunnable>()("NotRunnable", 409, "not_runnable") {}
export class RunEnded extends ErrorClass<RunEnded>()("RunEnded", 409, "run_ended", Schema.Struct({ status: Schema.String })) {}
export class RouterIntegrationMissing extends ErrorClass<RouterIntegrationMissing>()(
  "RouterIntegrationMissing",
  409,
  "router_integration_missing",
  Schema.Struct({ business_id: Schema.String })
) {}

/** Runs' domain errors as contract errors; `DatasetUnavailable` is the run workflow's, which fails the run instead. */
export const runsErrors = {
  RunInProgress: (e) =>
    Effect.fail(apiError(RunInProgress, `Run ${e.run_id} of this leaderboard has not ended: one run at a time`, {
      run_id: e.run_id
    })),
  DatasetMissing: (e) => Effect.fail(apiError(DatasetMissing, `No usable dataset: ${e.message}`)),
  NotRunnable: (e) => Effect.fail(apiError(NotRunnable, e.message)),
  RunEnded: (e) => Effect.fail(apiError(RunEnded, `The run has ended (${e.status})`, { status: e.status })),
  RouterIntegrationMissing: (e) =>
    Effect.fail(apiError(
      RouterIntegrationMissing,
      "The workspace has no router integration: an owner or admin adds one with POST /api/integrations/validate " +
        "{\"provider\": \"router\", \"token\": \"...\"}",
      { business_id: e.workspace_id }
    ))
} satisfies ErrorAnswers<typeof Runs, "DatasetUnavailable">
