import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { InferenceRequest } from "@podium/domain/inference"
import { LeaderboardId } from "@podium/domain/leaderboards"
import { NotFound, UpstreamError } from "../api/Errors.ts"
import { BudgetExceeded } from "../access/AccessErrors.ts"
import { NoServingModel } from "./InferenceErrors.ts"
import { LeaderboardArchived } from "../leaderboards/LeaderboardsErrors.ts"
import { ApiTokenAuth, requiresScope } from "../api/Security.ts"

/** The request of leaderboard and model inference alike (one schema, one rule: the domain's). */
export { InferenceRequest }

const ProviderResponse = Schema.Record(Schema.String, Schema.Unknown).annotate({
  description: "The serving candidate's chat-completion JSON, byte for byte (a Service candidate's with `model` " +
    "set to its model's name); with `stream: true`, `text/event-stream` in OpenAI's chunk format instead. Headers " +
    "(sent before the first event when streaming): X-Service-Trace-Id, " +
    "X-Service-Leaderboard-Model-Id, X-Service-Model-Source (the candidate's platform)."
})

/** How the serving path takes OpenAI's whole request and streams: leaderboard and model inference alike. */
export const wholeRequest = "The request is also OpenAI's whole chat-completions request, a superset of the interface's: " +
  "every parameter sent (tools, tool_choice, response_format, top_p, stop, seed, user, logprobs, n, " +
  "max_completion_tokens, ...) is forwarded to the upstream as given, except `model` (Podium chooses), " +
  "`stream`/`stream_options` (below) and Podium's own input, prompt, question and query; messages pass unchanged " +
  "in OpenAI's shapes (string or parts content with `image_url`, an assistant turn with `tool_calls` and null " +
  "content, `tool` turns with `tool_call_id`, `name`). Traces and inference logs keep the messages as sent, inline " +
  "images whole (the 16 MB body limit bounds them); an answer without text is traced with its tool calls as JSON " +
  "for output. `stream: true` answers `text/event-stream` in OpenAI's chunk format, the upstream's events passed " +
  "on as they arrive (the X-Service-* headers first) and no faster than the client reads; Podium asks the " +
  "upstream for usage and passes the usage chunk on only when the caller asked for it " +
  "(`stream_options.include_usage`). The trace (and a model's inference log and webhook) is written once, when " +
  "the stream stops, with the whole text, usage and cost; a client that goes away aborts the upstream call, " +
  "traced `cancelled` with what had arrived; an upstream failing mid-stream ends the stream with the event " +
  "`data: {\"error\": {\"code\": \"upstream_error\", ...}}` and a trace with the error. Errors before the first " +
  "event are JSON answers with their status, as without streaming."

/** What a budgeted call reserves. */
export const budgetBound = "input bounded by the UTF-8 bytes of every message, part and tool call, 2,000 tokens per " +
  "image part and the JSON of tool definitions and response_format; output by max_tokens or max_completion_tokens " +
  "(else BUDGET_DEFAULT_MAX_TOKENS, then sent upstream), times n"

const endpoint = <const Name extends string, const Path extends `/${string}`>(name: Name, path: Path, summary: string) =>
  HttpApiEndpoint.post(name, path, {
    params: { leaderboard_id: LeaderboardId },
    payload: InferenceRequest,
    success: ProviderResponse,
    error: [
      NotFound,
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
      "line); for messages given as parts, its last text part. " + wholeRequest + " A failing candidate is 502 `upstream_error` naming " +
      "it (a redirect it answers with is not followed). Every call, success or failure, is recorded as a trace with source `inference`. An API token with a " +
      "budget reserves an upper bound of the call's cost first (" + budgetBound + "; an unpriced call runs alone, and so does a call through a candidate whose price the token has not yet " +
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
  .annotateMerge(OpenApi.annotations({
    title: "Leaderboard Inference",
    description: "Chat completions through the candidate a leaderboard serves, traced and budgeted (OpenAI's request, " +
      "streamed or not)."
  }))
{}
