import { IntegrationUnavailable } from "@podium/domain/integrations"
import { type CatalogueModel, type EndpointLatency, RouterCatalogue } from "@podium/domain/runs"
import { type Duration, Effect, Layer, Option, type Redacted, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"

export interface RouterCatalogueHttpOptions {
  /** OpenRouter-style API root, e.g. `https://openrouter.ai/api/v1`; unset means the router is unavailable. */
  readonly routerBaseUrl?: string | undefined
  /** Bounds one request, body included. Default 10 seconds. */
  readonly timeout?: Duration.Input | undefined
}

// OpenRouter's `GET /models`: `{data: [{id, name, pricing: {prompt, completion}, hugging_face_id, ...}]}`,
// prices in USD per token as strings. An entry that is not a model is left out, not the whole catalogue.
const Catalogue = Schema.fromJsonString(Schema.Struct({ data: Schema.Array(Schema.Unknown) }))
const ListedModel = Schema.Struct({
  id: Schema.String.check(Schema.isMinLength(1)),
  name: Schema.optional(Schema.NullOr(Schema.String)),
  pricing: Schema.optional(Schema.NullOr(Schema.Struct({
    prompt: Schema.optional(Schema.Unknown),
    completion: Schema.optional(Schema.Unknown)
  }))),
  hugging_face_id: Schema.optional(Schema.NullOr(Schema.String))
})
const decodeModel = Schema.decodeUnknownOption(ListedModel)

// OpenRouter's `GET /models/{author}/{slug}/endpoints`: `{data: {endpoints: [{latency_last_30m: {p50, p75, p90, p99}}]}}`, in ms.
const Endpoints = Schema.fromJsonString(Schema.Struct({
  data: Schema.Struct({
    endpoints: Schema.Array(Schema.Struct({ latency_last_30m: Schema.optional(Schema.Unknown) }))
  })
}))

/** USD per token (string or number); null unless finite and non-negative (the router lists -1 for variable prices). */
const price = (value: unknown): number | null => {
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : typeof value === "number" ? value : NaN
  return Number.isFinite(n) && n >= 0 ? n : null
}

const percentile = (value: unknown): number | null =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null

/** The endpoint's latency percentiles, or none when it reports none. */
const latencyOf = (value: unknown): Option.Option<EndpointLatency> => {
  if (typeof value !== "object" || value === null) return Option.none()
  const stats = value as Record<string, unknown>
  const latency = { p50: percentile(stats["p50"]), p75: percentile(stats["p75"]), p90: percentile(stats["p90"]), p99: percentile(stats["p99"]) }
  return Object.values(latency).every((p) => p === null) ? Option.none() : Option.some(latency)
}

/** `author/slug` stays a path; each segment is escaped. */
const modelPath = (id: string) => id.split("/").map(encodeURIComponent).join("/")

const make = Effect.fnUntraced(function*(options: RouterCatalogueHttpOptions) {
  const client = yield* HttpClient.HttpClient
  const base = options.routerBaseUrl?.replace(/\/+$/, "")
  const unavailable = (reason: string) => new IntegrationUnavailable({ provider: "router", reason })

  /** Status and body of `GET {base}{path}`, or Unavailable when the router cannot be asked. */
  const get = Effect.fnUntraced(function*(path: string, token: Redacted.Redacted<string>) {
    if (base === undefined || base === "") return yield* unavailable("the router is not configured")
    const request = HttpClientRequest.get(`${base}${path}`).pipe(
      HttpClientRequest.bearerToken(token),
      HttpClientRequest.acceptJson
    )
    return yield* client.execute(request).pipe(
      Effect.flatMap((response) => Effect.map(response.text, (body) => ({ status: response.status, body }))),
      Effect.timeout(options.timeout ?? "10 seconds"),
      Effect.mapError((error) =>
        unavailable(error._tag === "TimeoutError" ? "the router did not answer in time" : "could not reach the router")
      )
    )
  })

  const models = Effect.fn("RouterCatalogueHttp.models")(function*(token: Redacted.Redacted<string>) {
    const { body, status } = yield* get("/models", token)
    if (status !== 200) return yield* unavailable(`the router's model catalogue answered ${status}`)
    const catalogue = yield* Schema.decodeUnknownEffect(Catalogue)(body).pipe(
      Effect.mapError(() => unavailable("the router sent an unreadable model catalogue"))
    )
    return catalogue.data.flatMap((entry): Array<CatalogueModel> =>
      Option.match(decodeModel(entry), {
        onNone: () => [],
        onSome: (m) => [{
          id: m.id,
          name: m.name ?? null,
          prompt_price: price(m.pricing?.prompt),
          completion_price: price(m.pricing?.completion),
          hugging_face_id: m.hugging_face_id ?? null
        }]
      })
    )
  })

  const latency = Effect.fn("RouterCatalogueHttp.latency")(function*(modelId: string, token: Redacted.Redacted<string>) {
    const { body, status } = yield* get(`/models/${modelPath(modelId)}/endpoints`, token)
    // a model the router has no endpoints for has no latency
    if (status === 404) return []
    if (status !== 200) return yield* unavailable(`the router's endpoints of ${modelId} answered ${status}`)
    const endpoints = yield* Schema.decodeUnknownEffect(Endpoints)(body).pipe(
      Effect.mapError(() => unavailable(`the router sent unreadable endpoints of ${modelId}`))
    )
    return endpoints.data.endpoints.flatMap((endpoint) => Option.toArray(latencyOf(endpoint.latency_last_30m)))
  })

  return RouterCatalogue.of({ models, latency })
})

/** The router's model catalogue and endpoint latencies over the given `HttpClient`, asked afresh each time. */
export const RouterCatalogueHttp = {
  layer: (options: RouterCatalogueHttpOptions): Layer.Layer<RouterCatalogue, never, HttpClient.HttpClient> =>
    Layer.effect(RouterCatalogue, make(options))
}
