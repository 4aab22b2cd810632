import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { errorBody } from "../api/Errors.ts"

export const Health = Schema.Struct({
  ok: Schema.Literal(true),
  service: Schema.String,
  version: Schema.String,
  database: Schema.Literal("up")
}).annotate({ identifier: "Health" })
export type Health = typeof Health.Type

export class Unhealthy extends Schema.Class<Unhealthy>("Unhealthy")({
  ok: Schema.Literal(false),
  service: Schema.String,
  version: Schema.String,
  database: Schema.Literal("down"),
  error: errorBody("database_unavailable")
}, { httpApiStatus: 503 }) {}

export class HealthApi extends HttpApiGroup.make("health").add(
  HttpApiEndpoint.get("check", "/healthz", { success: Health, error: Unhealthy }).annotateMerge(
    OpenApi.annotations({ summary: "Liveness and database reachability; no credential needed" })
  )
)
  .annotateMerge(OpenApi.annotations({
    title: "Health",
    description: "Whether the service is up and reaches its database: for load balancers and probes, without a " +
      "credential."
  }))
{}
