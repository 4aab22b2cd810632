import { Effect, Schema } from "effect"
import type * as Inference from "@podium/domain/inference"
import { apiError, ErrorClass, type ErrorAnswers, UpstreamError } from "../api/Errors.ts"

// The HTTP errors of inference through a leaderboard or a served model; a candidate that fails
// answers with the shared `upstream_error`.

export class NoServingModel extends ErrorClass<NoServingModel>()(
  "NoServingModel",
  409,
  "no_serving_model",
  Schema.Struct({ leaderboard_id: Schema.String })
) {}
export class NoActiveDeployment extends ErrorClass<NoActiveDeployment>()(
  "NoActiveDeployment",
  409,
  "no_active_deployment",
  Schema.Struct({ model_id: Schema.String })
) {}

/** Inference's domain errors as contract errors; `ChatProviderFailed` is a provider's, which inference turns into `UpstreamFailed`. */
export const inferenceErrors = {
  NoServingModel: (e) =>
    Effect.fail(apiError(NoServingModel, "The leaderboard has no model to serve: choose one with PATCH /api/leaderboards/{id} " +
        "{\"chosen_model_strategy\": \"manual\", \"chosen_leaderboard_model_id\": \"<candidate id>\"}, " +
        "or keep ranking_winner and run the leaderboard", {
      leaderboard_id: e.leaderboard_id
    })),
  NoActiveDeployment: (e) =>
    Effect.fail(apiError(NoActiveDeployment, "The serving model has no active deployment", {
      model_id: e.model_id
    })),
  UpstreamFailed: (e) =>
    Effect.fail(apiError(UpstreamError, `Candidate ${e.candidate_name} failed: ${e.reason}`, {
      candidate_id: e.candidate_id,
      candidate_name: e.candidate_name,
      trace_id: e.trace_id
    }))
} satisfies ErrorAnswers<typeof Inference, "ChatProviderFailed">
