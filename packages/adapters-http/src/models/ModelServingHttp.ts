import { DateTime, Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import type { Principal } from "@podium/domain/access"
import type { InferenceRequest } from "@podium/domain/inference"
import { Deployments, type InferenceLog, ModelInference, ModelLogs, ModelWebhooks } from "@podium/domain/models"
import { Links, type ModelId, type ModelVersionId } from "@podium/domain/shared"
import { Api } from "../api/Api.ts"
import { CurrentPrincipal } from "../api/Security.ts"
import { errorAsLastEvent, eventStreamHeaders, eventStreamType, handlerOf, type Served } from "../EndpointCore.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"
import { versionViewOf } from "./ModelsHttp.ts"

const DeploymentsHttp = HttpApiBuilder.group(
  Api,
  "deployments",
  Effect.fn(function*(handlers) {
    const deployments = yield* Deployments
    const versionView = versionViewOf(yield* Links)
    return handlers.handle("deploy", ({ params, payload }) =>
      Effect.gen(function*() {
        const version = yield* deployments.deploy(yield* CurrentPrincipal, params.model_id, params.version_id, payload ?? {})
        return { version: versionView(version) }
      }).pipe(mapDomainErrors))
      .handle("stop", ({ params }) =>
        Effect.gen(function*() {
          const version = yield* deployments.stop(yield* CurrentPrincipal, params.model_id, params.version_id)
          return { version: versionView(version) }
        }).pipe(mapDomainErrors))
  })
)

/**
 * Model inference's core, for the router and the front door alike (FastInference), on every alias:
 * the model's deployed version answers (or the version the path names), with the headers naming
 * the model, the version, its inference log and its trace.
 */
export const modelInference = Effect.map(Effect.service(ModelInference), (inference) =>
  (
    principal: Principal,
    { params, payload }: {
      readonly params: { readonly model_id: ModelId; readonly version_id?: ModelVersionId | undefined }
      readonly payload: InferenceRequest
    }
  ) =>
    mapDomainErrors(Effect.map(inference.infer(principal, params.model_id, params.version_id ?? null, payload), (served): Served => {
      const headers = {
        "x-service-model-id": served.model_id,
        "x-service-model-version-id": served.version_id,
        "x-service-model-message-id": served.message_id,
        ...(served.trace_id === null ? {} : { "x-service-trace-id": served.trace_id })
      }
      return served.events === undefined
        ? { contentType: "application/json", body: served.body ?? "", headers }
        : {
          contentType: eventStreamType,
          body: errorAsLastEvent(served.events, (e) => mapDomainErrors(Effect.fail(e))),
          headers: { ...headers, ...eventStreamHeaders }
        }
    })))

const ModelInferenceHttp = HttpApiBuilder.group(
  Api,
  "modelInference",
  Effect.fn(function*(handlers) {
    const handle = handlerOf(yield* modelInference)
    return handlers
      .handle("infer", handle)
      .handle("inferAlias", handle)
      .handle("chatCompletions", handle)
      .handle("inferVersion", handle)
      .handle("inferVersionAlias", handle)
  })
)

const logView = (log: InferenceLog) => ({
  id: log.id,
  timestamp: DateTime.formatIso(log.timestamp),
  input_message: log.input_message,
  output_messages: log.output_messages,
  traces: log.traces,
  metadata: log.metadata,
  created_at: DateTime.formatIso(log.created_at)
})

const ModelLogsHttp = HttpApiBuilder.group(
  Api,
  "modelLogs",
  Effect.fn(function*(handlers) {
    const logs = yield* ModelLogs
    const webhooks = yield* ModelWebhooks
    const configure = ({ params, payload }: {
      readonly params: { readonly model_id: ModelId }
      readonly payload: { readonly webhook_url?: string | null; readonly enabled?: boolean }
    }) =>
      Effect.gen(function*() {
        const { enabled, secret, webhook_url } = yield* webhooks.configure(yield* CurrentPrincipal, params.model_id, payload)
        return { webhook_url, enabled, ...(secret === null ? {} : { secret }) }
      }).pipe(mapDomainErrors)
    return handlers
      .handle("patchWebhook", configure)
      .handle("putWebhook", configure)
      .handle("postWebhook", configure)
      .handle("getWebhook", ({ params }) =>
        Effect.gen(function*() {
          const webhook = yield* webhooks.get(yield* CurrentPrincipal, params.model_id)
          return {
            webhook_url: webhook.webhook_url,
            enabled: webhook.enabled,
            secret_created_at: DateTime.formatIso(webhook.secret_created_at),
            updated_at: DateTime.formatIso(webhook.updated_at)
          }
        }).pipe(mapDomainErrors))
      .handle("logs", ({ params, query }) =>
        Effect.gen(function*() {
          const page = yield* logs.list(yield* CurrentPrincipal, params.model_id, {
            limit: query.limit,
            cursor: query.cursor,
            from: query.from,
            to: query.to
          })
          return { logs: page.logs.map(logView), next_cursor: page.next_cursor }
        }).pipe(mapDomainErrors))
  })
)

/** Deployment, model inference and inference logs. */
export const ModelServingHttp = Layer.mergeAll(DeploymentsHttp, ModelInferenceHttp, ModelLogsHttp)
