import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Podium, session, startPodium } from "./support/Podium.ts"

let podium: Podium
let owner: string

beforeAll(async () => {
  podium = await startPodium()
  owner = await session("errors-owner")
})
afterAll(() => podium.stop())

const expectErrorBody = (body: unknown, code: string) => {
  expect(body).toMatchObject({ error: { code, message: expect.any(String) } })
}

describe("health", () => {
  it("answers without a credential, with a request id", async () => {
    const reply = await podium.request("GET", "/healthz")
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({ ok: true, service: "podium", database: "up" })
    expect(reply.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/)
  })

  it("echoes a sane caller request id and replaces an unsafe one", async () => {
    const kept = await podium.request("GET", "/healthz", { headers: { "x-request-id": "trace-abc.123" } })
    expect(kept.headers.get("x-request-id")).toBe("trace-abc.123")
    const replaced = await podium.request("GET", "/healthz", { headers: { "x-request-id": "bad id with spaces" } })
    expect(replaced.headers.get("x-request-id")).not.toBe("bad id with spaces")
  })
})

describe("the contract's error body", () => {
  it("404 for an unknown route", async () => {
    const reply = await podium.request("GET", "/api/nothing-here")
    expect(reply.status).toBe(404)
    expectErrorBody(reply.body, "not_found")
    expect(reply.headers.get("x-request-id")).toBeTruthy()
  })

  it("405 with Allow for a known path and the wrong method", async () => {
    const reply = await podium.request("PUT", "/api/tokens")
    expect(reply.status).toBe(405)
    expectErrorBody(reply.body, "method_not_allowed")
    expect(reply.headers.get("allow")).toContain("GET")
    expect(reply.headers.get("allow")).toContain("POST")
  })

  it("400 validation_failed with the failing paths", async () => {
    const reply = await podium.request("POST", "/api/tokens", {
      token: owner,
      json: { name: "", scopes: ["leaderboards:read", "root"], expires_in: "2d" }
    })
    expect(reply.status).toBe(400)
    expectErrorBody(reply.body, "validation_failed")
    const paths = reply.body.error.details.issues.map((i: { path: Array<string | number> }) => i.path.join("."))
    expect(paths).toEqual(expect.arrayContaining(["payload.name", "payload.scopes.1", "payload.expires_in"]))
  })

  it("400 for malformed JSON", async () => {
    const reply = await podium.request("POST", "/api/tokens", {
      token: owner,
      body: "{\"name\": ",
      headers: { "content-type": "application/json" }
    })
    expect(reply.status).toBe(400)
    expectErrorBody(reply.body, "validation_failed")
    expect(reply.text).toContain("JSON")
  })

  it("400 for a malformed path parameter", async () => {
    const reply = await podium.request("POST", "/api/tokens/not-a-uuid/revoke", { token: owner })
    expect(reply.status).toBe(400)
    expect(reply.body.error.details.issues[0].path).toEqual(["params", "token_id"])
  })

  it("413 for a body over the limit", async () => {
    const reply = await podium.request("POST", "/api/tokens", {
      token: owner,
      body: JSON.stringify({ name: "x".repeat(17 * 1024 * 1024) }),
      headers: { "content-type": "application/json" }
    })
    expect(reply.status).toBe(413)
    expectErrorBody(reply.body, "payload_too_large")
  })

  it("415 for a body that is not JSON", async () => {
    const reply = await podium.request("POST", "/api/tokens", {
      token: owner,
      body: "name=x",
      headers: { "content-type": "application/x-www-form-urlencoded" }
    })
    expect(reply.status).toBe(415)
    expectErrorBody(reply.body, "unsupported_media_type")
  })

  it("serves the generated OpenAPI document and the docs page", async () => {
    const spec = await podium.request("GET", "/openapi.json")
    expect(spec.status).toBe(200)
    expect(spec.body.openapi).toMatch(/^3\.1/)
    const docs = await podium.request("GET", "/docs")
    expect(docs.status).toBe(200)
    expect(docs.headers.get("content-type")).toContain("text/html")
    expect(docs.text).not.toMatch(/<script[^>]+src=["']https?:/) // bundled: works offline
    expect(docs.text.length).toBeGreaterThan(1_000_000)
  })
})
