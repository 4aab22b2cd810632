/**
 * HTTP request metrics, the one way both transports (the router and the front door) count: a
 * counter of requests and a latency histogram by route template, method and status, in Effect's
 * metric registry (served as Prometheus text at `/metrics`, packages/server/src/Metrics.ts).
 *
 * Labels are bounded: a route is the endpoint's path template (`/v1/leaderboard/:leaderboard_id/inference`),
 * never the URL; a path no route knows is `unmatched`. A request's update is two plain metric
 * updates on series made once per route and status (no label object, string or fiber per request).
 */
import { type Context, Effect, Exit, Cause, Metric } from "effect"
import { FindMyWay, HttpRouter, HttpServerRequest, type HttpServerResponse } from "effect/http"
import type * as Types from "effect/Types"

export const requestsTotal = "podium_http_requests_total"
export const requestDuration = "podium_http_request_duration_seconds"

/** Latency buckets, in seconds: from a fast cached answer to a slow model's whole reply. */
export const durationBoundaries: ReadonlyArray<number> = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

/** One route's (and method's) series: `record` counts an answer with `status` to a request that came in at `started` (performance.now()). */
export interface RouteMetrics {
  readonly record: (status: number, started: number) => void
}

/**
 * The series of `route` and `method` in `context`'s metric registry. The series of a status are
 * made on its first answer and kept (statuses are few), so a request's update allocates nothing.
 */
export const routeMetrics = (context: Context.Context<never>, method: string, route: string): RouteMetrics => {
  const byStatus = new Map<number, readonly [Metric.Counter<number>, Metric.Histogram<number>]>()
  return {
    record: (status, started) => {
      let series = byStatus.get(status)
      if (series === undefined) {
        const attributes = { route, method, status: String(status) }
        series = [
          Metric.counter(requestsTotal, { description: "HTTP requests answered, by route template, method and status", attributes, incremental: true }),
          Metric.histogram(requestDuration, {
            description: "Time from a request's arrival to its answer (a streamed answer's end at the front door), in seconds",
            boundaries: durationBoundaries,
            attributes
          })
        ]
        byStatus.set(status, series)
      }
      series[0].updateUnsafe(1, context)
      series[1].updateUnsafe((performance.now() - started) / 1000, context)
    }
  }
}

/** `routeMetrics` bound to the current context's registry. */
export const makeRouteMetrics: Effect.Effect<(method: string, route: string) => RouteMetrics> = Effect.map(
  Effect.context<never>(),
  (context) => (method, route) => routeMetrics(context, method, route)
)

/** The part of an HttpApi the metrics read: its routes. */
export interface RouteSource {
  readonly groups: Readonly<Record<string, { readonly endpoints: Readonly<Record<string, { readonly path: string; readonly method: string }>> }>>
}

/** Methods counted under their own name; any other is `other` (labels stay bounded). */
const knownMethods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

/** What a request answered by the router gets when it never produced a response: a client gone (499), else a failure (500). */
const statusOfExit = (exit: Exit.Exit<HttpServerResponse.HttpServerResponse, unknown>) =>
  Exit.isSuccess(exit) ? exit.value.status : Cause.hasInterruptsOnly(exit.cause) ? 499 : 500

/**
 * The router's request metrics, as a global middleware that must wrap every other (so it sees the
 * final status of the request pipeline's answers: provide it beneath the routes, see App.ts). The
 * route template is found with the router's own matcher over the Api's paths and `extraPaths`
 * (plain routes: the docs, the web app, `/metrics`); `/assets/*` for the web app's files.
 */
export const RequestMetricsMiddleware = (api: RouteSource, extraPaths: ReadonlyArray<string> = []) =>
  HttpRouter.middleware(Effect.gen(function*() {
    const metricsOf = yield* makeRouteMetrics
    const router = FindMyWay.make<Map<string, RouteMetrics>>(yield* HttpRouter.RouterConfig)
    const byPath = new Map<string, Map<string, RouteMetrics>>()
    const methodsOf = (route: string) => {
      const methods = new Map(knownMethods.map((method) => [method, metricsOf(method, route)] as const))
      methods.set("other", metricsOf("other", route))
      return methods
    }
    const table = (path: string) => {
      if (byPath.has(path)) return
      const methods = methodsOf(path)
      byPath.set(path, methods)
      router.all(path as FindMyWay.PathInput, methods)
    }
    for (const group of Object.values(api.groups)) {
      for (const endpoint of Object.values(group.endpoints)) table(endpoint.path)
    }
    for (const path of [...extraPaths, "/assets/*"]) table(path)
    const unmatched = methodsOf("unmatched")

    return (app: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled, HttpServerRequest.HttpServerRequest>) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const started = performance.now()
        const methods = router.find(request.method, request.url)?.handler ?? unmatched
        const metrics = methods.get(request.method) ?? methods.get("other")!
        return Effect.onExit(app, (exit) => Effect.sync(() => metrics.record(statusOfExit(exit), started)))
      })
  }), { global: true })
