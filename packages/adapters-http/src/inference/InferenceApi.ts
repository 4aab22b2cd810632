import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { InferenceRequest } from "@podium/domain/inference"
import { LeaderboardId } from "@podium/domain/leaderboards"
import { NotFound, UpstreamError } from "../api/Errors.ts"
import { BudgetExceeded } from "../access/AccessErrors.ts"
import { NoServingModel, StreamingUnsupported } from "./InferenceErrors.ts"
import { LeaderboardArchived } from "../leaderboards/LeaderboardsErrors.ts"
import { ApiTokenAuth, requiresScope } from "../api/Security.ts"

/** The request of leaderboard and model inference alike (one schema, one rule: the domain's). */
export { InferenceRequest }

const ProviderResponse = Schema.Record(Schema.String, Schema.Unknown).annotate({
  description: "The serving candidate's chat-completion JSON, byte for byte (a Service candidate's with `model` " +
    "set to its model's name). Headers: X-Service-Trace-Id, " +
    "X-Service-Leaderboard-Model-Id, X-Service-Model-Source (the candidate's platform)."
})

const endpoint = <const Name extends string, const Path extends `/${string}`>(name: Name, path: Path, summary: string) =>
  HttpApiEndpoint.post(name, path, {
    params: { leaderboard_id: LeaderboardId },
    payload: InferenceRequest,
    success: ProviderResponse,
    error: [
      NotFound,
      StreamingUnsupported,
      LeaderboardArchived,
      NoServingModel,
      BudgetExceeded,
      UpstreamError
    ]
  }).annotateMerge(requiresScope("leaderboards:inference")).annotateMerge(OpenApi.annotations({
    summary,
    description: "Served by the leaderboard's chosen model: the manual choice, else the ranking's winner (human evaluation's " +
      "common rows), else " +
      "the chosen candidate, else the only candidate (409 `no_serving_model`, saying how to choose, when there " +
      "is none). The input is `messages` (which win over any of the fields below sent alongside) or exactly one " +
      "of input, prompt, question and query; the challenge's `system_prompt` leads as a system message and its " +
      "`model_prompt` templates the user message (`{input}` is replaced; without it the input follows a blank " +
      "line). `stream: true` is 400 `streaming_unsupported`. A failing candidate is 502 `upstream_error` naming " +
      "it (a redirect it answers with is not followed). Every call, success or failure, is recorded as a trace with source `inference`. An API token with a " +
      "budget reserves an upper bound of the call's cost first (output capped at max_tokens, else BUDGET_DEFAULT_MAX_TOKENS; an unpriced call runs alone, and so does a call through a candidate whose price the token has not yet " +
      "seen kept: none has settled within its reservation, or one settled above it); when its spend has reached the budget the call is 429 " +
      "`budget_exceeded` with `Retry-After` (seconds until the budget resets). Instances serve from copies of " +
      "the token and leaderboard that Postgres change notifications keep current: a change made on another " +
      "instance applies within milliseconds."
  }))

export class InferenceApi extends HttpApiGroup.make("inference")
  .add(
    endpoint("infer", "/v1/leaderboard/:leaderboard_id/inference", "Inference through the leaderboard's chosen model"),
    endpoint(
      "chatCompletions",
      "/v1/leaderboard/:leaderboard_id/chat/completions",
      "OpenAI-compatible alias: use baseURL {base}/v1/leaderboard/{leaderboard_id} in OpenAI clients"
    )
  )
  .middleware(ApiTokenAuth)
  .annotateMerge(OpenApi.annotations({ title: "Inference" }))
{}
