import { type Benchmark, type Scenario, benchSession } from "./Benchmark.ts"
import { startHubFake } from "./HubFake.ts"

/**
 * The two ways in: a session (JWT verified, then the user, their pending invites and memberships
 * read on every request) and an API token (hash lookup, throttled last-use update, scope check),
 * the latter on an endpoint that also asks the hub about one dataset.
 */
export const AuthBench: Benchmark = {
  name: "auth",
  description: "session GET /api/tokens; API token POST /api/datasets/hub/check against a loopback hub",
  upstreams: async () => {
    const hub = await startHubFake()
    return { env: { HUB_BASE_URL: hub.url, ALLOW_PRIVATE_NETWORK_TARGETS: "true" }, stop: hub.close }
  },
  scenarios: async (podium): Promise<ReadonlyArray<Scenario>> => {
    const jwt = await benchSession("bench-user")
    const created = await fetch(`${podium.url}/api/tokens`, {
      method: "POST",
      headers: { authorization: `Bearer ${jwt}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "bench", scopes: ["leaderboards:write"] })
    })
    if (created.status !== 201) throw new Error(`creating the API token answered ${created.status}: ${await created.text()}`)
    const { secret } = await created.json() as { secret: string }
    return [
      {
        name: "session GET /api/tokens",
        target: { method: "GET", path: "/api/tokens", headers: { authorization: `Bearer ${jwt}` } }
      },
      {
        name: "token POST /api/datasets/hub/check",
        target: {
          method: "POST",
          path: "/api/datasets/hub/check",
          headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
          body: JSON.stringify({ dataset_url: "acme/rows" })
        }
      }
    ]
  }
}
