import { assert, describe, it } from "@effect/vitest"
import { RouterCatalogue } from "@podium/domain/runs"
import { Effect, Layer, Redacted } from "effect"
import { RouterCatalogueHttp } from "./RouterCatalogueHttp.ts"
import { SafeHttp } from "./SafeHttpClient.ts"
import { loopbackServer } from "./testing/Loopback.ts"

const key = "sk-or-v1-catalogue-key"
const seen: Array<{ readonly url: string | undefined; readonly authorization: string | undefined }> = []
let mode: "ok" | "down" | "garbage" = "ok"

// OpenRouter's GET /models and GET /models/{author}/{slug}/endpoints, as they answer
const upstream = loopbackServer((request, response) => {
  seen.push({ url: request.url, authorization: request.headers.authorization })
  const json = (status: number, body: unknown) =>
    response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body))
  if (mode === "down") return json(503, { error: { message: "unavailable", code: 503 } })
  if (mode === "garbage") return response.writeHead(200, { "content-type": "application/json" }).end("<html>")
  switch (request.url) {
    case "/api/v1/models":
      return json(200, {
        data: [
          {
            id: "meta-llama/llama-3.1-8b-instruct",
            canonical_slug: "meta-llama/llama-3.1-8b-instruct",
            hugging_face_id: "meta-llama/Meta-Llama-3.1-8B-Instruct",
            name: "Meta: Llama 3.1 8B Instruct",
            context_length: 131072,
            pricing: { prompt: "0.00000002", completion: "0.00000005", request: "0", image: "0" }
          },
          { id: "openai/gpt-4o-mini", hugging_face_id: "", name: "OpenAI: GPT-4o-mini", pricing: { prompt: 0.00000015, completion: 0.0000006 } },
          { id: "openrouter/auto", hugging_face_id: null, name: "Auto Router", pricing: { prompt: "-1", completion: "-1" } },
          { id: "acme/bare" },
          { name: "no id" }
        ]
      })
    case "/api/v1/models/openai/gpt-4o-mini/endpoints":
      return json(200, {
        data: {
          id: "openai/gpt-4o-mini",
          name: "OpenAI: GPT-4o-mini",
          endpoints: [
            { name: "OpenAI | openai/gpt-4o-mini", provider_name: "OpenAI", latency_last_30m: { p50: 400, p75: 600, p90: 900, p99: 1800 } },
            { name: "Azure | openai/gpt-4o-mini", provider_name: "Azure", latency_last_30m: null },
            { name: "Other", provider_name: "Other", latency_last_30m: { p50: 300, p75: null, p90: null, p99: 2500 } }
          ]
        }
      })
    default:
      return json(404, { error: { message: "Model not found", code: 404 } })
  }
})

const layer = () =>
  RouterCatalogueHttp.layer({ routerBaseUrl: `${upstream.url()}/api/v1/` }).pipe(
    Layer.provide(SafeHttp.layer({ allowPrivateNetwork: true }))
  )
const token = Redacted.make(key)

describe("RouterCatalogueHttp", () => {
  it.effect("reads the catalogue with the token: per-token prices, open weights, no price for variable or missing ones", () =>
    Effect.gen(function*() {
      mode = "ok"
      const models = yield* RouterCatalogue.use((c) => c.models(token))
      assert.deepStrictEqual(models, [
        {
          id: "meta-llama/llama-3.1-8b-instruct",
          name: "Meta: Llama 3.1 8B Instruct",
          prompt_price: 0.00000002,
          completion_price: 0.00000005,
          hugging_face_id: "meta-llama/Meta-Llama-3.1-8B-Instruct"
        },
        {
          id: "openai/gpt-4o-mini",
          name: "OpenAI: GPT-4o-mini",
          prompt_price: 0.00000015,
          completion_price: 0.0000006,
          hugging_face_id: ""
        },
        { id: "openrouter/auto", name: "Auto Router", prompt_price: null, completion_price: null, hugging_face_id: null },
        { id: "acme/bare", name: null, prompt_price: null, completion_price: null, hugging_face_id: null }
      ])
      assert.deepStrictEqual(seen.at(-1), { url: "/api/v1/models", authorization: `Bearer ${key}` })
    }).pipe(Effect.provide(layer())))

  it.effect("reads each endpoint's latency percentiles, leaving out endpoints without any", () =>
    Effect.gen(function*() {
      mode = "ok"
      const latency = yield* RouterCatalogue.use((c) => c.latency("openai/gpt-4o-mini", token))
      assert.deepStrictEqual(latency, [
        { p50: 400, p75: 600, p90: 900, p99: 1800 },
        { p50: 300, p75: null, p90: null, p99: 2500 }
      ])
      assert.deepStrictEqual(seen.at(-1), {
        url: "/api/v1/models/openai/gpt-4o-mini/endpoints",
        authorization: `Bearer ${key}`
      })
      // unknown to the router: no latency, not a failure
      assert.deepStrictEqual(yield* RouterCatalogue.use((c) => c.latency("acme/bare", token)), [])
    }).pipe(Effect.provide(layer())))

  it.effect("a failing or unreadable router is IntegrationUnavailable", () =>
    Effect.gen(function*() {
      for (const failing of ["down", "garbage"] as const) {
        mode = failing
        const models = yield* Effect.flip(RouterCatalogue.use((c) => c.models(token)))
        assert.strictEqual(models._tag, "IntegrationUnavailable")
        assert.strictEqual(models.provider, "router")
        const latency = yield* Effect.flip(RouterCatalogue.use((c) => c.latency("openai/gpt-4o-mini", token)))
        assert.strictEqual(latency._tag, "IntegrationUnavailable")
        assert.notInclude(`${models.reason} ${latency.reason}`, key)
      }
      mode = "ok"
    }).pipe(Effect.provide(layer())))

  it.effect("without a router base URL the router is unavailable", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(RouterCatalogue.use((c) => c.models(token)))
      assert.strictEqual(error.reason, "the router is not configured")
    }).pipe(Effect.provide(RouterCatalogueHttp.layer({}).pipe(Layer.provide(SafeHttp.layer({ allowPrivateNetwork: true }))))))
})
