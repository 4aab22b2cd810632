import { Scopes } from "@podium/domain/access"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fill, type Operation, operations } from "./support/OpenApiRoutes.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"

let podium: Podium
let owner: string
let routes: ReadonlyArray<Operation>
const tokens = new Map<string, string>() // scope -> a token carrying only that scope

beforeAll(async () => {
  podium = await startPodium()
  owner = await session("matrix-owner")
  routes = await operations(podium)
  for (const scope of Scopes) {
    const created = await podium.request("POST", "/api/tokens", { token: owner, json: { name: scope, scopes: [scope] } })
    expect(created.status).toBe(201)
    tokens.set(scope, created.body.secret)
  }
})
afterAll(() => podium.stop())

const call = (route: Operation, token: string) =>
  podium.request(route.method, fill(route.path), { token, ...(route.method === "GET" ? {} : { json: {} }) })

// Generated from /openapi.json: a new route is covered the day it is added.
describe("every API-token route × every single-scope token", () => {
  it("the document names a scope for every route that takes API tokens", () => {
    const tokenRoutes = routes.filter((r) => r.schemes.includes("ApiToken"))
    expect(tokenRoutes.length).toBeGreaterThan(5)
    for (const route of tokenRoutes) {
      expect(route.acceptedScopes.length, `${route.method} ${route.path}`).toBeGreaterThan(0)
      for (const scope of route.acceptedScopes) expect(Scopes, `${route.method} ${route.path}`).toContain(scope)
    }
  })

  it("names both inference scopes on the OpenAI model list, each kind's on its retrieve route", () => {
    const scopesOf = (path: string) => routes.find((r) => r.method === "GET" && r.path === path)?.acceptedScopes
    expect(scopesOf("/v1/models")).toEqual(["leaderboards:inference", "models:inference"])
    expect(scopesOf("/v1/models/{target}")).toEqual(["leaderboards:inference", "models:inference"])
    expect(scopesOf("/v1/models/leaderboard/{leaderboard_id}")).toEqual(["leaderboards:inference"])
    expect(scopesOf("/v1/models/model/{model_id}")).toEqual(["models:inference"])
  })

  it("names the spec's scope on each model and fine-tune route", () => {
    const spec: Record<string, string> = {
      "GET /api/models": "models:read",
      "POST /api/models": "models:write",
      "GET /api/models/{model_id}": "models:read",
      "PATCH /api/models/{model_id}": "models:write",
      "DELETE /api/models/{model_id}": "models:write",
      "GET /api/models/{model_id}/leaderboards": "models:read",
      "GET /api/base-models": "models:read",
      "GET /api/models/{model_id}/fine-tune/runs": "models:read",
      "POST /api/models/{model_id}/fine-tune/run": "models:fine-tune",
      "POST /api/models/{model_id}/fine-tune/sync": "models:fine-tune",
      "GET /api/models/{model_id}/versions": "models:read"
    }
    const named = Object.fromEntries(routes.filter((r) => `${r.method} ${r.path}` in spec).map((r) => {
      expect(r.schemes, `${r.method} ${r.path}`).toEqual(["ApiToken"])
      return [`${r.method} ${r.path}`, r.requiredScope]
    }))
    expect(named).toEqual(spec)
  })

  it("a named scope gets past authorisation, every other scope is 403 insufficient_scope", async () => {
    for (const route of routes.filter((r) => r.schemes.includes("ApiToken"))) {
      for (const scope of Scopes) {
        const reply = await call(route, tokens.get(scope)!)
        const where = `${route.method} ${route.path} with ${scope}: ${reply.status} ${reply.text.slice(0, 200)}`
        if (route.acceptedScopes.includes(scope)) {
          expect([401, 403], where).not.toContain(reply.status)
          expect(reply.status, where).toBeLessThan(500)
        } else {
          expect(reply.status, where).toBe(403)
          expect(reply.body.error, where).toMatchObject({
            code: "insufficient_scope",
            details: route.requiredScope === undefined
              ? { required_scope: route.acceptedScopes[0], accepted_scopes: route.acceptedScopes }
              : { required_scope: route.requiredScope }
          })
        }
      }
    }
  })

  it("session-only routes refuse API tokens of every scope with 401", async () => {
    const sessionRoutes = routes.filter((r) => r.schemes.includes("Session") && !r.schemes.includes("ApiToken"))
    expect(sessionRoutes.length).toBeGreaterThan(5)
    for (const route of sessionRoutes) {
      for (const scope of Scopes) {
        const reply = await call(route, tokens.get(scope)!)
        expect(reply.status, `${route.method} ${route.path} with ${scope}`).toBe(401)
        expect(reply.body.error.code).toBeTypeOf("string")
      }
    }
  })
})
