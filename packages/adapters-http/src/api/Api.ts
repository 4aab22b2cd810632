import { HttpApi, OpenApi } from "effect/http-api"
import { DatasetsApi } from "../integrations/DatasetsApi.ts"
import { DatasetAdminApi, PushDatasetsApi } from "../datasets/PushDatasetsApi.ts"
import { HealthApi } from "../health/HealthApi.ts"
import { HumanApi } from "../human/HumanApi.ts"
import { InferenceApi } from "../inference/InferenceApi.ts"
import { OpenAiModelsApi } from "../inference/OpenAiModelsApi.ts"
import { RequestErrors } from "./Security.ts"
import { IntegrationsApi } from "../integrations/IntegrationsApi.ts"
import { InvitesApi } from "../access/InvitesApi.ts"
import { AutoSelectApi } from "../runs/AutoSelectApi.ts"
import { LeaderboardsApi } from "../leaderboards/LeaderboardsApi.ts"
import { ModelsApi } from "../models/ModelsApi.ts"
import { DeploymentsApi, ModelInferenceApi, ModelLogsApi } from "../models/ModelServingApi.ts"
import { TokensApi } from "../access/TokensApi.ts"
import { WebSessionApi } from "../access/WebSessionApi.ts"
import { WorkspacesApi } from "../access/WorkspacesApi.ts"
import { TracesApi } from "../inference/TracesApi.ts"
import { StatsApi } from "../inference/StatsApi.ts"
import { RunsApi } from "../runs/RunsApi.ts"

/** This service's version (the root package.json's), reported by `/openapi.json` and `podium --version`. */
export const serviceVersion = "0.1.0"

/** The version of the interface specification this service implements (a draft). */
export const interfaceVersion = "1.0.0"

/** The public contract of Podium: served by the server, used by clients and tests. */
export class Api extends HttpApi.make("podium")
  .add(HealthApi)
  .add(WebSessionApi)
  .add(TokensApi)
  .add(WorkspacesApi)
  .add(IntegrationsApi)
  .add(InvitesApi)
  .add(DatasetsApi)
  .add(LeaderboardsApi)
  .add(AutoSelectApi)
  .add(RunsApi)
  .add(InferenceApi)
  .add(TracesApi)
  .add(PushDatasetsApi)
  .add(DatasetAdminApi)
  .add(HumanApi)
  .add(ModelsApi)
  .add(DeploymentsApi)
  .add(ModelInferenceApi)
  .add(OpenAiModelsApi)
  .add(ModelLogsApi)
  .add(StatsApi)
  .middleware(RequestErrors)
  // Report every invalid field of a request at once, not just the first.
  .annotate(HttpApi.PayloadParseOptions, { errors: "all" })
  .annotate(HttpApi.QueryParseOptions, { errors: "all" })
  .annotateMerge(OpenApi.annotations({
    title: "Podium",
    version: serviceVersion,
    description: `Podium ${serviceVersion}, implementing the Podium interface draft ${interfaceVersion}. ` +
      "Compare candidate models, serve traffic through the winner, record every call. " +
      "Every non-2xx response has the body `{\"error\": {\"code\", \"message\", \"details\"?}}`; each code has one " +
      "status and its own schema, named after it (`stale_revision` is `StaleRevision`, 409); " +
      "validation failures are 400 `validation_failed` with `details.issues: [{path, message}]`, each `path` led by " +
      "the part of the request (`payload`, `query`, `params` or `headers`); a JSON body that is not UTF-8 is 400 " +
      "`invalid_json`. Error bodies are `application/json`, and every answer carries `X-Content-Type-Options: nosniff`. " +
      "Every credential a request presents is checked (a failing one is 401 even beside one that passes); a client " +
      "address whose credentials failed too often is answered 429 `too_many_failed_authentications` with `Retry-After`. " +
      "In the browser, every route but inference, chat completions and the OpenAI model list also takes the web " +
      "session's cookie (Web Sessions: POST /api/session); a POST, PUT, PATCH or DELETE it signs in needs its CSRF " +
      "token in X-Podium-CSRF (else 403 `csrf_token_required`)."
  }))
{}
