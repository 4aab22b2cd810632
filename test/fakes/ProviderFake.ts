import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A loopback stand-in for an OpenRouter-style router (`/api/v1/key`) and a Hugging Face-style hub
 * (`/api/whoami-v2`, `/api/datasets/{owner}/{name}`), speaking their public response shapes.
 */
export interface ProviderFake {
  readonly url: string
  readonly routerBaseUrl: string
  readonly hubBaseUrl: string
  /** Authorization headers received, per path. */
  readonly seen: Array<{ readonly path: string; readonly authorization: string | undefined }>
  /** Makes every answer a 500 while true. */
  failing: boolean
  readonly close: () => Promise<void>
}

export const routerKey = "sk-or-v1-good-router-key"
export const hubToken = "hf_goodHubToken"

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

const datasets: Record<string, { private: boolean; rows: Record<string, number> | null }> = {
  "acme/rows": { private: false, rows: { train: 120, test: 30 } },
  "acme/tiny": { private: false, rows: { train: 12 } },
  "acme/unknown-size": { private: false, rows: null },
  "acme/private": { private: true, rows: { train: 500 } }
}

export const startProviderFake = async (): Promise<ProviderFake> => {
  const fake = { seen: [], failing: false } as unknown as { -readonly [K in keyof ProviderFake]: ProviderFake[K] }
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://fake").pathname
    const authorization = req.headers.authorization
    fake.seen.push({ path, authorization })
    if (fake.failing) return json(res, 500, { error: "boom" })
    if (path === "/api/v1/key") {
      return authorization === `Bearer ${routerKey}`
        ? json(res, 200, { data: { label: "sk-or-v1-goo...key", usage: 1.5, limit: null, is_free_tier: false } })
        : json(res, 401, { error: { message: "No auth credentials found", code: 401 } })
    }
    if (path === "/api/whoami-v2") {
      return authorization === `Bearer ${hubToken}`
        ? json(res, 200, {
          type: "user",
          name: "alice",
          fullname: "Alice",
          email: "alice@example.com",
          orgs: [{ name: "acme" }],
          auth: { type: "access_token", accessToken: { displayName: "podium", role: "read" } }
        })
        : json(res, 401, { error: "Invalid credentials in Authorization header" })
    }
    const match = /^\/api\/datasets\/([^/]+\/[^/]+)$/.exec(path)
    if (match !== null) {
      const dataset = datasets[match[1]!]
      const authorized = authorization === `Bearer ${hubToken}`
      if (dataset === undefined || (dataset.private && !authorized)) {
        return json(res, 401, { error: "Repository not found" })
      }
      return json(res, 200, {
        id: match[1],
        private: dataset.private,
        gated: false,
        cardData: dataset.rows === null ? {} : {
          dataset_info: {
            splits: Object.entries(dataset.rows).map(([name, rows]) => ({ name, num_bytes: rows * 100, num_examples: rows }))
          }
        }
      })
    }
    json(res, 404, { error: "not found" })
  }
  const server: Server = createServer(handle)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  fake.url = url
  fake.routerBaseUrl = `${url}/api/v1`
  fake.hubBaseUrl = url
  fake.close = () => new Promise<void>((resolve) => server.close(() => resolve()))
  return fake
}
