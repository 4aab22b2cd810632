import { assert, describe, it } from "@effect/vitest"
import { PriceCatalogue } from "@podium/domain/inference"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { PriceCatalogueRouter } from "./PriceCatalogueRouter.ts"
import { SafeHttp } from "./SafeHttpClient.ts"
import { loopbackServer } from "./testing/Loopback.ts"

let fetches = 0
let down = false
// OpenRouter's GET /models: prices are USD per token, as strings
const upstream = loopbackServer((request, response) => {
  fetches++
  if (down || request.url !== "/api/v1/models") return response.writeHead(503).end()
  response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({
    data: [
      { id: "acme/priced", pricing: { prompt: "0.0000015", completion: "0.000002", request: "0" } },
      { id: "acme/free", pricing: { prompt: "0", completion: "0" } },
      { id: "acme/odd", pricing: { prompt: "-1", completion: "n/a" } },
      { id: "acme/none" }
    ]
  }))
})

const prices = (model: string) => PriceCatalogue.use((catalogue) => catalogue.routerPrices(model))
const layer = () =>
  PriceCatalogueRouter.layer({ routerBaseUrl: `${upstream.url()}/api/v1/` }).pipe(
    Layer.provide(SafeHttp.layer({ allowPrivateNetwork: true }))
  )

describe("PriceCatalogueRouter", () => {
  it.effect("reads per-token prices as per-million, and unknown for what it cannot price", () =>
    Effect.gen(function*() {
      fetches = 0
      const priced = yield* prices("acme/priced")
      assert.closeTo(priced.input!, 1.5, 1e-9)
      assert.closeTo(priced.output!, 2, 1e-9)
      assert.deepStrictEqual(yield* prices("acme/free"), { input: 0, output: 0 })
      for (const model of ["acme/odd", "acme/none", "acme/unlisted"]) {
        assert.deepStrictEqual(yield* prices(model), { input: null, output: null })
      }
      assert.strictEqual(fetches, 1) // one fetch, then the cache
    }).pipe(Effect.provide(layer())))

  it.effect("an unreachable catalogue means unknown prices, and is asked again after a while", () =>
    Effect.gen(function*() {
      down = true
      fetches = 0
      assert.deepStrictEqual(yield* prices("acme/priced"), { input: null, output: null })
      assert.deepStrictEqual(yield* prices("acme/priced"), { input: null, output: null })
      assert.strictEqual(fetches, 1)
      down = false
      yield* TestClock.adjust("31 seconds")
      assert.closeTo((yield* prices("acme/priced")).input!, 1.5, 1e-9)
      assert.strictEqual(fetches, 2)
    }).pipe(Effect.provide(layer())))

  it.effect("without a router there is no catalogue", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* prices("acme/priced"), { input: null, output: null })
    }).pipe(Effect.provide(PriceCatalogueRouter.layer({}).pipe(Layer.provide(SafeHttp.layer({ allowPrivateNetwork: true }))))))
})
