import { Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { InvitesHttp } from "./access/InvitesHttp.ts"
import { TokensHttp } from "./access/TokensHttp.ts"
import { WebSessionHttp } from "./access/WebSessionHttp.ts"
import { WorkspacesHttp } from "./access/WorkspacesHttp.ts"
import { Api } from "./api/Api.ts"
import { PushDatasetsHttp } from "./datasets/PushDatasetsHttp.ts"
import { layerAuthentication } from "./handlers/Authentication.ts"
import { HealthHttp } from "./health/HealthHttp.ts"
import { HumanHttp } from "./human/HumanHttp.ts"
import { InferenceHttp } from "./inference/InferenceHttp.ts"
import { OpenAiModelsHttp } from "./inference/OpenAiModelsHttp.ts"
import { TracesHttp } from "./inference/TracesHttp.ts"
import { StatsHttp } from "./inference/StatsHttp.ts"
import { DatasetsHttp } from "./integrations/DatasetsHttp.ts"
import { IntegrationsHttp } from "./integrations/IntegrationsHttp.ts"
import { LeaderboardsHttp } from "./leaderboards/LeaderboardsHttp.ts"
import { ModelServingHttp } from "./models/ModelServingHttp.ts"
import { ModelsHttp } from "./models/ModelsHttp.ts"
import { AutoSelectHttp } from "./runs/AutoSelectHttp.ts"
import { RunsHttp } from "./runs/RunsHttp.ts"

/** Where the API's OpenAPI document is served. */
export const openApiPath = "/openapi.json"

/**
 * The Api (api/Api.ts) served: each context's handler groups, behind the credential checks its
 * endpoints declare (handlers/Authentication.ts); they need the contexts' use cases.
 */
export const ApiHttp = HttpApiBuilder.layer(Api, { openapiPath: openApiPath }).pipe(
  Layer.provide([
    HealthHttp,
    WebSessionHttp,
    TokensHttp,
    WorkspacesHttp,
    IntegrationsHttp,
    InvitesHttp,
    DatasetsHttp,
    LeaderboardsHttp,
    AutoSelectHttp,
    RunsHttp,
    InferenceHttp,
    TracesHttp,
    PushDatasetsHttp,
    HumanHttp,
    ModelsHttp,
    ModelServingHttp,
    OpenAiModelsHttp,
    StatsHttp
  ]),
  Layer.provide(layerAuthentication)
)
