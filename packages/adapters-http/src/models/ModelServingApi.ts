import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { InferenceRequest } from "@podium/domain/inference"
import { DeployOptions, maxLogsPerPage, ModelId } from "@podium/domain/models"
import { Forbidden, NotFound, UpstreamError } from "../api/Errors.ts"
import { BudgetExceeded } from "../access/AccessErrors.ts"
import { NoActiveDeployment } from "../inference/InferenceErrors.ts"
import { budgetBound, wholeRequest } from "../inference/InferenceApi.ts"
import { NoSuccessfulFineTune, VersionDeployed, VersionNotDeployed } from "./ModelsErrors.ts"
import { ModelVersionId } from "@podium/domain/shared"
import { IsoTimestamp, Timestamp, Uuid } from "../api/Schemas.ts"
import { ApiTokenAuth, requiresScope, SessionAuth } from "../api/Security.ts"
import { VersionView } from "./ModelsApi.ts"

const versionParams = { model_id: ModelId, version_id: ModelVersionId }

export class DeploymentsApi extends HttpApiGroup.make("deployments")
  .add(
    HttpApiEndpoint.post("deploy", "/api/models/:model_id/versions/:version_id/deploy", {
      params: versionParams,
      payload: [DeployOptions.annotate({ identifier: "DeployOptions" }), Schema.Null],
      success: Schema.Struct({ version: VersionView }),
      error: [NotFound, Forbidden, VersionDeployed]
    }).annotateMerge(OpenApi.annotations({
      summary: "Deploy a model version",
      description: "A signed-in owner or admin of the model's workspace (API tokens are not accepted; members 403). " +
        "Options, all optional: `max_workers` 1–100 (default 4: calls served at once per instance, more wait), " +
        "`active_workers` 0–`max_workers` (default 0), `default_max_new_tokens` 1–4096 (default 512: `max_tokens` " +
        "of a call that sets none), `idle_timeout` 1–3600 seconds (default 300); outside them 400. A worker is a " +
        "call slot: versions hold no per-worker state here, so `active_workers` and `idle_timeout` are stored and " +
        "shown but change nothing yet. Answers 200 " +
        "with the version `deploying`; a background check asks it once (the provider's tuned model for `openai` " +
        "versions, the router's base model with the demonstrations for `few_shot` ones) and makes it `active` — " +
        "the model's version active before becomes `stopped` — or `failed` with `deployment_error`. A version " +
        "deploying or active already is 409 `version_deployed`. Each deploy is recorded in the model's deployment " +
        "history (`GET /api/models/{id}/deployment-history`) with who asked: `rollback` when the version was " +
        "created before the one active then, `deploy` otherwise."
    })),
    HttpApiEndpoint.post("stop", "/api/models/:model_id/versions/:version_id/stop", {
      params: versionParams,
      success: Schema.Struct({ version: VersionView }),
      error: [NotFound, Forbidden, VersionNotDeployed]
    }).annotateMerge(OpenApi.annotations({
      summary: "Stop a deployed model version",
      description: "A signed-in owner or admin of the model's workspace (API tokens are not accepted; members 403). " +
        "The version's deployment must be `active` (409 `version_not_deployed` otherwise, `details.status` saying " +
        "what it is); it becomes `stopped` and the model serves nothing until a version is deployed again (its " +
        "inference is 409 `no_active_deployment`). Nothing of a version runs outside Podium (a tuned model stays " +
        "with its provider, a prompt program is the router's base model), so stopping is Podium no longer routing " +
        "to it. Recorded as a `stop` in the model's deployment history."
    }))
  )
  .middleware(SessionAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Model Deployments",
    description: "Deploying and stopping a model's versions: signed-in owners and admins of its workspace."
  }))
{}

const ProviderResponse = Schema.Record(Schema.String, Schema.Unknown).annotate({
  description: "The version's chat-completion JSON, as the provider answered but with `model` set to the Podium " +
    "model's name (never where the version lives); with `stream: true`, `text/event-stream` in OpenAI's chunk " +
    "format. Headers (sent before the first event when streaming): X-Service-Model-Id, " +
    "X-Service-Model-Version-Id (the immutable version that answered), X-Service-Model-Message-Id (its inference " +
    "log), X-Service-Trace-Id (its trace on the model's first leaderboard)."
})

const inferenceErrors = [NotFound, NoSuccessfulFineTune, NoActiveDeployment, BudgetExceeded, UpstreamError]

const modelDescription = "The most recently deployed active version of the model answers (409 `no_successful_fine_tune` " +
  "before a fine-tune succeeded, 409 `no_active_deployment` when no version is active). The request is the " +
  "leaderboard inference request, read by the same rule: `messages` (which win over input, prompt, question and " +
  "query sent alongside) or exactly one of those four as the user's message; none or two is 400 " +
  "`validation_failed`. The conversation is sent as given (no " +
  "challenge applies; a `few_shot` version puts its demonstrations in front), `max_tokens` (or " +
  "`max_completion_tokens`) defaults to the deployment's `default_max_new_tokens`. The answer's `model` is the " +
  "Podium model's name (in every event when streaming). " + wholeRequest + " Budgets apply as for leaderboard " +
  "inference (" + budgetBound + "); every call is traced " +
  "and logged (GET …/inference/logs), and delivered to the model's webhook when it is on."

const modelEndpoint = <const Name extends string, const Path extends `/${string}`>(name: Name, path: Path, summary: string) =>
  HttpApiEndpoint.post(name, path, { params: { model_id: ModelId }, payload: InferenceRequest, success: ProviderResponse, error: inferenceErrors })
    .annotateMerge(requiresScope("models:inference"))
    .annotateMerge(OpenApi.annotations({ summary, description: modelDescription }))

const versionEndpoint = <const Name extends string, const Path extends `/${string}`>(name: Name, path: Path, summary: string) =>
  HttpApiEndpoint.post(name, path, { params: versionParams, payload: InferenceRequest, success: ProviderResponse, error: inferenceErrors })
    .annotateMerge(requiresScope("models:inference"))
    .annotateMerge(OpenApi.annotations({
      summary,
      description: "That version answers; it must be deployed and active (409 `no_active_deployment` otherwise, " +
        "404 when it is not a version of the model). " + modelDescription.slice(modelDescription.indexOf("The request"))
    }))

export class ModelInferenceApi extends HttpApiGroup.make("modelInference")
  .add(
    modelEndpoint("infer", "/v1/models/:model_id/inference", "Inference through the model's deployed version"),
    modelEndpoint("inferAlias", "/api/models/:model_id/inference", "Inference through the model (alias)"),
    modelEndpoint(
      "chatCompletions",
      "/v1/models/:model_id/chat/completions",
      "OpenAI-compatible alias: use baseURL {base}/v1/models/{model_id} in OpenAI clients"
    ),
    versionEndpoint("inferVersion", "/v1/models/:model_id/versions/:version_id/inference", "Inference through one version"),
    versionEndpoint("inferVersionAlias", "/api/models/:model_id/versions/:version_id/inference", "Inference through one version (alias)")
  )
  .middleware(ApiTokenAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Model Inference",
    description: "Chat completions through a model's deployed version, or one version named, logged for the model's " +
      "inference logs and webhook."
  }))
{}

export const InferenceLogView = Schema.Struct({
  id: Schema.String,
  timestamp: IsoTimestamp,
  input_message: Schema.Record(Schema.String, Schema.Unknown),
  output_messages: Schema.Record(Schema.String, Schema.Unknown),
  traces: Schema.Record(Schema.String, Schema.Unknown),
  metadata: Schema.Record(Schema.String, Schema.Unknown),
  created_at: IsoTimestamp
}).annotate({ identifier: "InferenceLog" })

const WebhookConfigRequest = Schema.Struct({
  webhook_url: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(2048)))),
  enabled: Schema.optionalKey(Schema.Boolean),
  rotate_secret: Schema.optionalKey(Schema.Boolean.annotate({
    description: "true: a new signing secret for the webhook set (or the URL given), shown once in `secret`; the old " +
      "one stops signing at once. Without a webhook to keep, 400"
  }))
}).annotate({ identifier: "WebhookConfig" })

const WebhookConfigView = Schema.Struct({
  webhook_url: Schema.NullOr(Schema.String),
  enabled: Schema.Boolean,
  secret: Schema.optionalKey(Schema.String.annotate({
    description: "The `whsec_…` signing secret, shown once: when a webhook_url is set anew or `rotate_secret` is " +
      "true (keep it; it is not shown again)"
  }))
}).annotate({ identifier: "Webhook" })

const webhookDescription = "The model's `model.inference` webhook: every stored inference log is delivered once (POST " +
  "`{event, delivered_at, model: {id, business_id, name}, log}`), signed per Standard Webhooks (`webhook-id` = the " +
  "log id, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>` with the secret), from a durable " +
  "outbox written with the log; a non-2xx answer or none is retried with exponential backoff (8 attempts), and " +
  "the outcome is the log's `metadata.webhook_delivery`. `webhook_url` must be a public https URL without " +
  "credentials (the address is checked after DNS when connecting; redirects are not followed); empty or null " +
  "clears and disables it; without it, `enabled` turns the webhook set on or off. A new URL gets a new secret."

const WebhookSettingsView = Schema.Struct({
  webhook_url: Schema.String,
  enabled: Schema.Boolean,
  secret_created_at: IsoTimestamp.annotate({
    description: "When the signing secret was made: when this webhook_url was set (webhooks set before this field " +
      "existed show their last change before it)"
  }),
  updated_at: IsoTimestamp
}).annotate({ identifier: "WebhookSettings", description: "A model's webhook, read back: never its secret" })

/** A time bound of the logs: ISO 8601, a date alone or a date-time with `Z` or an offset (no local times). */
const LogTime = Schema.String.check(Schema.isPattern(
  /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/,
  { message: "Expected an ISO 8601 date or date-time with Z or an offset, e.g. 2026-11-27T10:00:00Z" }
)).pipe(Schema.decodeTo(Timestamp))

const webhookOptions = {
  params: { model_id: ModelId },
  payload: WebhookConfigRequest,
  success: WebhookConfigView,
  error: NotFound
}
const webhookDocs = (method: string) =>
  OpenApi.annotations({ summary: `Configure the model's inference webhook (${method})`, description: webhookDescription })
const webhookPath = "/api/models/:model_id/inference/webhook"

export class ModelLogsApi extends HttpApiGroup.make("modelLogs")
  .add(
    HttpApiEndpoint.patch("patchWebhook", webhookPath, webhookOptions)
      .annotateMerge(requiresScope("models:write")).annotateMerge(webhookDocs("PATCH")),
    HttpApiEndpoint.put("putWebhook", webhookPath, webhookOptions)
      .annotateMerge(requiresScope("models:write")).annotateMerge(webhookDocs("PUT")),
    HttpApiEndpoint.post("postWebhook", webhookPath, webhookOptions)
      .annotateMerge(requiresScope("models:write")).annotateMerge(webhookDocs("POST")),
    HttpApiEndpoint.get("getWebhook", webhookPath, {
      params: { model_id: ModelId },
      success: WebhookSettingsView,
      error: NotFound
    }).annotateMerge(requiresScope("models:read")).annotateMerge(OpenApi.annotations({
      summary: "The model's inference webhook",
      description: "Where the model's `model.inference` deliveries go (`webhook_url`), whether they are on " +
        "(`enabled`), when its signing secret was made (`secret_created_at`: when the URL was set; a new URL makes " +
        "a new secret) and when it was last changed. The secret itself is shown only once, by the PATCH, PUT or POST " +
        "that sets a new URL, and never here. 404 `not_found` when the model has no webhook (none was set, or it " +
        "was cleared), as for an unknown model."
    })),
    HttpApiEndpoint.get("logs", "/api/models/:model_id/inference/logs", {
      params: { model_id: ModelId },
      query: {
        limit: Schema.optionalKey(
          Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: maxLogsPerPage }))
        ),
        cursor: Schema.optionalKey(Uuid.annotate({ description: "The previous page's `next_cursor`" })),
        from: Schema.optionalKey(LogTime.annotate({ description: "Only logs made at or after this time (inclusive)" })),
        to: Schema.optionalKey(LogTime.annotate({ description: "Only logs made before this time (exclusive)" })),
        offset: Schema.optionalKey(Schema.String.check(Schema.makeFilter(() =>
          "offset is not supported on inference logs: page with cursor (the previous page's next_cursor)"
        )).annotate({ description: "Not supported: any value is 400 `validation_failed`; page with `cursor`" }))
      },
      success: Schema.Struct({
        logs: Schema.Array(InferenceLogView),
        next_cursor: Schema.NullOr(Uuid).annotate({
          description: "Pass as `cursor` for the next page (the last log's id) while older logs remain, else null"
        })
      }),
      error: NotFound
    }).annotateMerge(requiresScope("models:read")).annotateMerge(OpenApi.annotations({
      summary: "The model's inference logs, newest first",
      description: "`limit` 1–100 (default 100). Newest first (by `created_at`, which is the call's `timestamp`, " +
        "then by id); `next_cursor` is non-null while older logs remain: pass it as `cursor` for the next page. A " +
        "page starts after its cursor's log, so logs written while a client pages never repeat or shift a page; a " +
        "cursor that names no log of the model gives an empty page. `from` (inclusive) and `to` (exclusive) keep " +
        "the logs made in that time, ISO 8601 with a date and, with a time, a `Z` or offset (e.g. " +
        "`2026-11-27T10:00:00Z`); a bad value or `from` after `to` is 400 `validation_failed`. `offset` is not " +
        "supported (400, page with `cursor`). Each log: `input_message`, `output_messages`, `traces` (the provider " +
        "exchange, without credentials and without where the version lives) and `metadata` (status, version_id, " +
        "trainer, latency_ms, usage, cost_usd, trace_id, and `webhook_delivery` once a delivery was attempted). Logs " +
        "are written off the request path, within a moment of the call."
    }))
  )
  .middleware(ApiTokenAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Model Logs and Webhooks",
    description: "A model's inference logs by cursor, and the webhook each log is delivered to (signed, retried, " +
      "its delivery status on the log)."
  }))
{}
