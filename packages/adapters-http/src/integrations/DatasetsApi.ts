import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { WorkspaceId } from "@podium/domain/shared"
import { Forbidden, UpstreamError } from "../api/Errors.ts"
import { DatasetNotFound } from "./IntegrationsErrors.ts"
import { ApiTokenAuth, requiresScope } from "../api/Security.ts"

export const HubCheckView = Schema.Struct({
  dataset_url: Schema.String,
  dataset_id: Schema.String,
  business_id: WorkspaceId,
  valid: Schema.Literal(true),
  private: Schema.Boolean,
  gated: Schema.Boolean,
  rows: Schema.NullOr(Schema.Int).annotate({ description: "Total rows over all splits, when the hub states them" }),
  splits: Schema.Array(Schema.Struct({ name: Schema.String, rows: Schema.Int })),
  meets_min_rows: Schema.Boolean.annotate({ description: "At least 100 rows, as model assignment needs" }),
  used_integration: Schema.Boolean
}).annotate({ identifier: "HubDatasetCheck" })
export type HubCheckView = typeof HubCheckView.Type

export class DatasetsApi extends HttpApiGroup.make("datasets")
  .add(
    HttpApiEndpoint.post("hubCheck", "/api/datasets/hub/check", {
      payload: Schema.Struct({
        dataset_url: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(2048)),
        business_id: Schema.optionalKey(WorkspaceId)
      }),
      success: HubCheckView,
      error: [Forbidden, DatasetNotFound, UpstreamError]
    }).annotate(OpenApi.Summary, "Check a hub dataset and count its rows")
      .annotateMerge(requiresScope("leaderboards:write"))
      .annotateMerge(OpenApi.annotations({
        description: "Checks that a hub dataset exists and is readable (with the workspace's hub integration token " +
          "when there is one) and reports its row count. Needs scope `leaderboards:write`, or a session. " +
          "404 `dataset_not_found` when the hub does not know it or will not show it."
      }))
  )
  .middleware(ApiTokenAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Hub Datasets",
    description: "Checks a dataset on the hub before a leaderboard uses it as its dataset URL."
  }))
{}
