import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { LeaderboardId } from "@podium/domain/leaderboards"
import { ModelId } from "@podium/domain/shared"
import { Forbidden, NotFound } from "../api/Errors.ts"
import { ApiTokenAuth, requiresAnyScope, requiresScope } from "../api/Security.ts"

/** One inference target in OpenAI's model shape. */
export const OpenAiModel = Schema.Struct({
  id: Schema.String.annotate({
    description: "`leaderboard/{leaderboard_id}` or `model/{model_id}`: with baseURL {base}/v1/leaderboard/{leaderboard_id} " +
      "or {base}/v1/models/{model_id} an OpenAI client calls it (`…/chat/completions`)"
  }),
  object: Schema.Literal("model"),
  created: Schema.Int.annotate({ description: "When the leaderboard or model was created, in Unix seconds" }),
  owned_by: Schema.String.annotate({ description: "The id (`business_id`) of the workspace that owns it" })
}).annotate({ identifier: "OpenAiModel" })

const OpenAiModelList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(OpenAiModel)
}).annotate({ identifier: "OpenAiModelList" })

/** `{kind}/{uuid}` as one path segment, the slash percent-encoded (`%2F`): how OpenAI clients send a model id. */
const TargetName = Schema.String.check(Schema.isPattern(
  /^(leaderboard|model)\/[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
  { message: "Expected leaderboard/{uuid} or model/{uuid}" }
))

const whoMayCall = "An API token lists what its scopes let it call in its workspace: with `leaderboards:inference` the " +
  "workspace's leaderboards that are not archived (`leaderboard/{id}`), with `models:inference` its models that have " +
  "an active deployment (`model/{id}`), with both both (leaderboards first, each kind oldest first); without either " +
  "it is 403 `insufficient_scope` (`details.accepted_scopes` names both). A signed-in session acts with every scope " +
  "in its workspace. `owned_by` is the owning workspace's id."

const retrieveDescription = "One entry of GET /v1/models, in the same shape; a target the caller's workspace does not " +
  "own, or that is archived, deleted or (a model) without an active deployment, is 404 `not_found`."

export class OpenAiModelsApi extends HttpApiGroup.make("openAiModels")
  .add(
    HttpApiEndpoint.get("list", "/v1/models", { success: OpenAiModelList, error: Forbidden })
      .annotateMerge(requiresAnyScope(["leaderboards:inference", "models:inference"]))
      .annotateMerge(OpenApi.annotations({
        summary: "OpenAI-compatible model list: what the caller can run inference on",
        description: `${whoMayCall} The answer is OpenAI's list (\`{object: "list", data: [{id, object: "model", ` +
          "created, owned_by}]}`), so `client.models.list()` of an OpenAI client with baseURL {base}/v1 reads it. " +
          "Errors keep Podium's error body."
      })),
    HttpApiEndpoint.get("retrieveLeaderboard", "/v1/models/leaderboard/:leaderboard_id", {
      params: { leaderboard_id: LeaderboardId },
      success: OpenAiModel,
      error: [NotFound, Forbidden]
    })
      .annotateMerge(requiresScope("leaderboards:inference"))
      .annotateMerge(OpenApi.annotations({ summary: "OpenAI-compatible model: a leaderboard", description: retrieveDescription })),
    HttpApiEndpoint.get("retrieveModel", "/v1/models/model/:model_id", {
      params: { model_id: ModelId },
      success: OpenAiModel,
      error: [NotFound, Forbidden]
    })
      .annotateMerge(requiresScope("models:inference"))
      .annotateMerge(OpenApi.annotations({ summary: "OpenAI-compatible model: a model", description: retrieveDescription })),
    HttpApiEndpoint.get("retrieve", "/v1/models/:target", {
      params: { target: TargetName },
      success: OpenAiModel,
      error: [NotFound, Forbidden]
    })
      .annotateMerge(requiresAnyScope(["leaderboards:inference", "models:inference"]))
      .annotateMerge(OpenApi.annotations({
        summary: "OpenAI-compatible model, its id in one segment",
        description: "`target` is `leaderboard/{id}` or `model/{id}` with the slash percent-encoded (`leaderboard%2F{id}`), " +
          "as OpenAI clients send `client.models.retrieve(id)`; the same answer as the two routes above. The token " +
          "needs the kind's scope (`leaderboards:inference` or `models:inference`; 403 `insufficient_scope` naming " +
          `it otherwise). ${retrieveDescription}`
      }))
  )
  .middleware(ApiTokenAuth)
  .annotateMerge(OpenApi.annotations({
    title: "OpenAI-Compatible Models",
    description: "What an OpenAI client lists and retrieves as models: the leaderboards and models the token can run " +
      "inference on."
  }))
{}
