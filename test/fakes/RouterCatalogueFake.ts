import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A loopback stand-in for an OpenRouter-style router's key check (`/api/v1/key`), model catalogue
 * (`/api/v1/models`) and per-model endpoint statistics (`/api/v1/models/{author}/{slug}/endpoints`),
 * speaking their public response shapes: prices in USD per token as strings, latencies in ms.
 */
export interface RouterCatalogueFake {
  readonly routerBaseUrl: string
  /** The catalogue's `data`, as listed. */
  models: Array<Record<string, unknown>>
  /** Each model's endpoints' `latency_last_30m`; a model not named here is 404 (no endpoints). */
  latencies: Record<string, Array<LatencyStats | null>>
  /** Requests received: path and Authorization header. */
  readonly seen: Array<{ readonly path: string; readonly authorization: string | undefined }>
  /** Makes the catalogue and endpoint answers 503 while true (the key check still works). */
  failing: boolean
  readonly close: () => Promise<void>
}

export interface LatencyStats {
  readonly p50: number | null
  readonly p75: number | null
  readonly p90: number | null
  readonly p99: number | null
}

export const catalogueRouterKey = "sk-or-v1-catalogue-router-key"

/** A catalogue entry as OpenRouter lists it; `prompt` and `completion` are USD per token. */
export const listedModel = (
  id: string,
  prompt: string,
  completion: string,
  hugging_face_id: string | null = null
): Record<string, unknown> => ({
  id,
  canonical_slug: id,
  hugging_face_id,
  name: `Acme: ${id.split("/")[1]}`,
  created: 1_790_000_000,
  description: `The ${id} model`,
  context_length: 131072,
  architecture: { modality: "text->text", input_modalities: ["text"], output_modalities: ["text"], tokenizer: "Other" },
  pricing: { prompt, completion, request: "0", image: "0" },
  top_provider: { context_length: 131072, max_completion_tokens: 16384, is_moderated: false },
  supported_parameters: ["temperature", "max_tokens"]
})

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

export const startRouterCatalogueFake = async (): Promise<RouterCatalogueFake> => {
  const fake = { seen: [], failing: false, models: [], latencies: {} } as unknown as {
    -readonly [K in keyof RouterCatalogueFake]: RouterCatalogueFake[K]
  }
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://fake").pathname
    const authorization = req.headers.authorization
    fake.seen.push({ path, authorization })
    if (path === "/api/v1/key") {
      return authorization === `Bearer ${catalogueRouterKey}`
        ? json(res, 200, { data: { label: "sk-or-v1-cat...key", usage: 0, limit: null, is_free_tier: false } })
        : json(res, 401, { error: { message: "No auth credentials found", code: 401 } })
    }
    if (fake.failing) return json(res, 503, { error: { message: "Service unavailable", code: 503 } })
    if (path === "/api/v1/models") return json(res, 200, { data: fake.models })
    const match = /^\/api\/v1\/models\/(.+)\/endpoints$/.exec(path)
    const id = match === null ? undefined : decodeURIComponent(match[1]!)
    if (id !== undefined && fake.latencies[id] !== undefined) {
      return json(res, 200, {
        data: {
          id,
          name: id,
          endpoints: fake.latencies[id]!.map((latency, i) => ({
            name: `Provider ${i} | ${id}`,
            provider_name: `Provider ${i}`,
            context_length: 131072,
            pricing: { prompt: "0", completion: "0" },
            status: 0,
            uptime_last_30m: 99.5,
            latency_last_30m: latency,
            throughput_last_30m: latency === null ? null : { p50: 50, p75: 40, p90: 30, p99: 10 }
          }))
        }
      })
    }
    json(res, 404, { error: { message: "Model not found", code: 404 } })
  }
  const server: Server = createServer(handle)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  fake.routerBaseUrl = `${url}/api/v1`
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return fake
}
