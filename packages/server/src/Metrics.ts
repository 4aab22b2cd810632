/**
 * `GET /metrics`: Effect's metric registry in the Prometheus text format (`PrometheusMetrics`),
 * for an operator's scraper, not part of the API contract (a plain route, not in the OpenAPI
 * document). Off (404, as any unknown path) unless `METRICS_TOKEN` is set, then only with
 * `Authorization: Bearer <METRICS_TOKEN>` (compared in constant time; API tokens of tenants never
 * open it), or `METRICS_PUBLIC=true` without a token.
 */
import { Context, Effect, Layer, Metric, Option, Redacted } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import { createHash, timingSafeEqual } from "node:crypto"
import { errorBody } from "@podium/adapters-http/ErrorAnswer"

/** The settings `/metrics` answers by (Config.ts: METRICS_TOKEN, METRICS_PUBLIC). */
export interface MetricsAccess {
  readonly metricsToken: Option.Option<Redacted.Redacted<string>>
  readonly metricsPublic: boolean
}

export const metricsPath = "/metrics"

/** The Prometheus text format's media type. */
const contentType = "text/plain; version=0.0.4; charset=utf-8"

/** One metric registry per app (Effect's default is one per process: two apps in a process would add up). */
export const layerMetricRegistry = Layer.sync(Metric.MetricRegistry, () => new Map())

/**
 * The registry as Prometheus text. Series a library registered without a description (some of
 * Effect's cluster gauges) get their name as help text: `promtool check metrics` wants one per family.
 */
const exposition = Effect.map(Effect.context<never>(), (context) => {
  const registry = Context.get(context, Metric.MetricRegistry)
  const described: typeof registry = new Map()
  for (const [key, series] of registry) {
    described.set(key, series.description === undefined ? { ...series, description: series.id.replace(/_/g, " ") } : series)
  }
  return PrometheusMetrics.formatUnsafe(Context.add(context, Metric.MetricRegistry, described))
})

const digest = (text: string) => createHash("sha256").update(text).digest()

/** Whether `authorization` carries `token` as a bearer credential, in time independent of where they differ. */
const bearerMatches = (authorization: string | undefined, token: Buffer) => {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")
  // both sides hashed: equal lengths for timingSafeEqual, and the token's length is not told either
  return timingSafeEqual(digest(match?.[1] ?? ""), token) && match !== null
}

/** The `/metrics` route, answering as `config` says (see the module's comment). */
export const layerMetricsRoute = (config: MetricsAccess) => {
  const token = Option.map(config.metricsToken, (t) => digest(Redacted.value(t)))
  const open = Option.isNone(token) && config.metricsPublic
  const handler = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (Option.isNone(token) && !open) {
      return HttpServerResponse.jsonUnsafe(errorBody("not_found", `No route for GET ${metricsPath}`), { status: 404 })
    }
    if (Option.isSome(token) && !bearerMatches(request.headers["authorization"], token.value)) {
      return HttpServerResponse.jsonUnsafe(
        errorBody("unauthorized", "Send the metrics token (METRICS_TOKEN) as Authorization: Bearer <token>"),
        { status: 401, headers: { "www-authenticate": "Bearer" } }
      )
    }
    return HttpServerResponse.text(yield* exposition, { contentType })
  })
  return HttpRouter.use((router) => router.add("GET", metricsPath, handler))
}
