import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { hubToken, type ProviderFake, routerKey, startProviderFake } from "./fakes/ProviderFake.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

let fake: ProviderFake
let podium: Podium
let owner: string
let workspace: string

beforeAll(async () => {
  fake = await startProviderFake()
  podium = await startPodium({ ROUTER_BASE_URL: fake.routerBaseUrl, HUB_BASE_URL: fake.hubBaseUrl })
  owner = await session("int-owner")
  workspace = (await podium.request("GET", "/api/tokens", { token: owner })).body.business_id
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

const validate = (json: Record<string, unknown>, token = owner) =>
  podium.request("POST", "/api/integrations/validate", { token, json })

describe("validating integrations", () => {
  it("a router token the router accepts is stored sealed; the reply says what the router reported", async () => {
    const reply = await validate({ provider: "router", token: routerKey })
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({
      provider: "router",
      valid: true,
      stored: true,
      has_token: true,
      business_id: workspace,
      account: { label: "sk-or-v1-goo...key", details: { usage: 1.5, is_free_tier: false } }
    })
    expect(reply.text).not.toContain(routerKey)
    expect(fake.seen.at(-1)).toEqual({ path: "/api/v1/key", authorization: `Bearer ${routerKey}` })
    const rows = await query(podium.databaseUrl, (sql) => sql`SELECT * FROM integrations WHERE provider = 'router'`)
    expect(rows).toHaveLength(1)
    expect(JSON.stringify(rows)).not.toContain(routerKey)
  })

  it("a hub token is checked with whoami, without echoing private fields", async () => {
    const reply = await validate({ provider: "hub", token: hubToken })
    expect(reply.status).toBe(200)
    expect(reply.body.account.label).toBe("alice")
    expect(reply.body.account.details).toMatchObject({ name: "alice", orgs: ["acme"], token_role: "read" })
    expect(reply.text).not.toContain("alice@example.com")
  })

  it("a token the provider refuses is a 400 with the provider's reason, and nothing is stored", async () => {
    const before = await query(podium.databaseUrl, (sql) => sql`SELECT sealed_token FROM integrations WHERE provider = 'router'`)
    const reply = await validate({ provider: "router", token: "sk-or-v1-bad" })
    expect(reply.status).toBe(400)
    expect(reply.body.error).toMatchObject({
      code: "invalid_integration_token",
      details: { provider: "router", reason: "No auth credentials found" }
    })
    const after = await query(podium.databaseUrl, (sql) => sql`SELECT sealed_token FROM integrations WHERE provider = 'router'`)
    expect(after).toEqual(before)
  })

  it("a provider that fails is a 502 upstream_error", async () => {
    fake.failing = true
    try {
      const reply = await validate({ provider: "hub", token: hubToken })
      expect(reply.status).toBe(502)
      expect(reply.body.error).toMatchObject({ code: "upstream_error", details: { provider: "hub" } })
    } finally {
      fake.failing = false
    }
  })

  it("validates the request", async () => {
    for (const json of [{ provider: "openai", token: "x" }, { provider: "router", token: "" }, { provider: "router" }]) {
      const reply = await validate(json)
      expect(reply.status, JSON.stringify(json)).toBe(400)
      expect(reply.body.error.code).toBe("validation_failed")
    }
  })

  it("needs an owner or admin session", async () => {
    await podium.request("POST", "/api/invite-user", { token: owner, json: { email: "int-member@example.com" } })
    const member = await session("int-member")
    const reply = await validate({ provider: "router", token: routerKey, business_id: workspace }, member)
    expect(reply.status).toBe(403)
    const created = await podium.request("POST", "/api/tokens", { token: owner, json: { name: "t" } })
    expect((await validate({ provider: "router", token: routerKey }, created.body.secret)).status).toBe(401)
  })
})

describe("checking hub datasets", () => {
  let writer: string
  beforeAll(async () => {
    writer = (await podium.request("POST", "/api/tokens", {
      token: owner,
      json: { name: "writer", scopes: ["leaderboards:write"] }
    })).body.secret
  })
  const check = (json: Record<string, unknown>, token = writer) =>
    podium.request("POST", "/api/datasets/hub/check", { token, json })

  it("reports rows and splits of a public dataset", async () => {
    const reply = await check({ dataset_url: "https://huggingface.co/datasets/acme/rows/viewer/default/train" })
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({
      dataset_id: "acme/rows",
      business_id: workspace,
      valid: true,
      private: false,
      rows: 150,
      splits: [{ name: "train", rows: 120 }, { name: "test", rows: 30 }],
      meets_min_rows: true
    })
    expect((await check({ dataset_url: "acme/tiny" })).body).toMatchObject({ rows: 12, meets_min_rows: false })
    expect((await check({ dataset_url: "hf://datasets/acme/unknown-size" })).body).toMatchObject({
      rows: null,
      meets_min_rows: false
    })
  })

  it("reads a private dataset with the workspace's hub integration", async () => {
    // The hub integration of this workspace was stored by the whoami test above.
    const reply = await check({ dataset_url: "acme/private" })
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({ private: true, rows: 500, used_integration: true })
    expect(fake.seen.at(-1)).toEqual({ path: "/api/datasets/acme/private", authorization: `Bearer ${hubToken}` })
  })

  it("a dataset the hub will not show is 404 dataset_not_found", async () => {
    const outsider = await session("int-outsider")
    const reply = await check({ dataset_url: "acme/private" }, outsider)
    expect(reply.status).toBe(404)
    expect(reply.body.error.code).toBe("dataset_not_found")
    expect((await check({ dataset_url: "acme/missing" })).status).toBe(404)
  })

  it("rejects what is not a dataset URL", async () => {
    for (const url of ["https://huggingface.co/models/acme/x", "ftp://x/datasets/a/b", "not a url", "a/b/c"]) {
      const reply = await check({ dataset_url: url })
      expect(reply.status, url).toBe(400)
      expect(reply.body.error.details.issues[0].path).toEqual(["dataset_url"])
    }
  })

  it("an API token cannot name another workspace", async () => {
    const other = await session("int-other")
    const otherWorkspace = (await podium.request("GET", "/api/tokens", { token: other })).body.business_id
    const reply = await check({ dataset_url: "acme/rows", business_id: otherWorkspace })
    expect(reply.status).toBe(403)
  })
})
