import type { Prices } from "@podium/domain/access"
import { PriceCatalogue } from "@podium/domain/inference"
import { type Duration, Effect, Exit, Layer, Option, Schema } from "effect"
import { HttpClient, HttpClientRequest } from "effect/http"

export interface PriceCatalogueRouterOptions {
  /** OpenRouter-style API root; unset means no catalogue (every router price unknown). */
  readonly routerBaseUrl?: string | undefined
  /** How long a fetched catalogue is used before it is fetched again. Default 10 minutes. */
  readonly ttl?: Duration.Input | undefined
  /** How long a failed fetch is remembered before the next call tries again. Default 30 seconds. */
  readonly failureTtl?: Duration.Input | undefined
  /** Bounds one fetch. Default 10 seconds. */
  readonly timeout?: Duration.Input | undefined
}

// OpenRouter's `GET /models`: `pricing.prompt` and `pricing.completion` are USD per token, as strings.
const Catalogue = Schema.fromJsonString(Schema.Struct({
  data: Schema.Array(Schema.Struct({
    id: Schema.String,
    pricing: Schema.optional(Schema.Struct({
      prompt: Schema.optional(Schema.Unknown),
      completion: Schema.optional(Schema.Unknown)
    }))
  }))
}))

const unknown: Prices = { input: null, output: null }

/** USD per token (string or number) as USD per million tokens; null unless a finite, non-negative price. */
const perMillion = (price: unknown): number | null => {
  const value = typeof price === "string" && price.trim() !== "" ? Number(price) : typeof price === "number" ? price : NaN
  return Number.isFinite(value) && value >= 0 ? value * 1_000_000 : null
}

const make = Effect.fnUntraced(function*(options: PriceCatalogueRouterOptions) {
  const base = options.routerBaseUrl?.replace(/\/+$/, "")
  if (base === undefined || base === "") return PriceCatalogue.none
  const client = yield* HttpClient.HttpClient
  const fetchCatalogue = client.execute(HttpClientRequest.get(`${base}/models`).pipe(HttpClientRequest.acceptJson)).pipe(
    Effect.flatMap((response) => response.status === 200 ? response.text : Effect.fail(new Error(`status ${response.status}`))),
    Effect.flatMap(Schema.decodeUnknownEffect(Catalogue)),
    Effect.timeout(options.timeout ?? "10 seconds"),
    Effect.map(({ data }) =>
      new Map(data.map((model) => {
        const input = perMillion(model.pricing?.prompt)
        const output = perMillion(model.pricing?.completion)
        return [model.id, input === null || output === null ? unknown : { input, output }] as const
      }))
    ),
    Effect.tapError((error) => Effect.logWarning("router catalogue unavailable; router prices unknown", { error: String(error) }))
  )
  // a failure is kept briefly: meanwhile prices are unknown, which only makes budgeted calls take turns
  const catalogue = yield* Effect.cachedWithTTL(
    fetchCatalogue,
    (exit) => Exit.isSuccess(exit) ? options.ttl ?? "10 minutes" : options.failureTtl ?? "30 seconds"
  )
  return PriceCatalogue.of({
    routerPrices: (modelName) =>
      catalogue.pipe(
        Effect.map((models) => Option.getOrElse(Option.fromNullishOr(models.get(modelName)), () => unknown)),
        Effect.orElseSucceed(() => unknown)
      )
  })
})

/** Router prices from its public model catalogue (`GET {ROUTER_BASE_URL}/models`), cached. */
export const PriceCatalogueRouter = {
  layer: (options: PriceCatalogueRouterOptions): Layer.Layer<PriceCatalogue, never, HttpClient.HttpClient> =>
    Layer.effect(PriceCatalogue, make(options))
}
