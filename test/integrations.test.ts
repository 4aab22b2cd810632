import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DateTime } from "effect"
import { hubToken, type ProviderFake, routerKey, startProviderFake } from "./fakes/ProviderFake.ts"
import type { WorkspaceId } from "@podium/domain/shared"
import type { ValidateIntegrationRequest } from "@podium/adapters-http/integrations/IntegrationsApi"
import { apiToken, type SignedIn, signedIn } from "./support/Builders.ts"
import { type Caller, client, expectError, expectValidation, unchecked } from "./support/Client.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

let fake: ProviderFake
let podium: Podium
let owner: SignedIn

beforeAll(async () => {
  fake = await startProviderFake()
  podium = await startPodium({ ROUTER_BASE_URL: fake.routerBaseUrl, HUB_BASE_URL: fake.hubBaseUrl })
  owner = await signedIn(podium, "int-owner")
})
afterAll(async () => {
  await podium.stop()
  await fake.close()
})

const validate = (payload: typeof ValidateIntegrationRequest.Type, api: Caller = owner.api) =>
  api((c) => c.integrations.validate({ payload }))

describe("validating integrations", () => {
  it("a router token the router accepts is stored sealed; the reply says what the router reported", async () => {
    const integration = await validate({ provider: "router", token: routerKey })
    expect(integration).toMatchObject({
      provider: "router",
      valid: true,
      stored: true,
      has_token: true,
      business_id: owner.workspace,
      account: { label: "sk-or-v1-goo...key", details: { usage: 1.5, is_free_tier: false } }
    })
    // Successes decode strictly, so the decoded reply is all the reply has.
    expect(JSON.stringify(integration)).not.toContain(routerKey)
    expect(fake.seen.at(-1)).toEqual({ path: "/api/v1/key", authorization: `Bearer ${routerKey}` })
    const rows = await query(podium.databaseUrl, (sql) => sql`SELECT * FROM integrations WHERE provider = 'router'`)
    expect(rows).toHaveLength(1)
    expect(JSON.stringify(rows)).not.toContain(routerKey)
  })

  it("a hub token is checked with whoami, without echoing private fields", async () => {
    const integration = await validate({ provider: "hub", token: hubToken })
    expect(integration.account.label).toBe("alice")
    expect(integration.account.details).toMatchObject({ name: "alice", orgs: ["acme"], token_role: "read" })
    expect(JSON.stringify(integration)).not.toContain("alice@example.com")
  })

  it("a token the provider refuses is a 400 with the provider's reason, and nothing is stored", async () => {
    const before = await query(podium.databaseUrl, (sql) => sql`SELECT sealed_token FROM integrations WHERE provider = 'router'`)
    const refused = await expectError(validate({ provider: "router", token: "sk-or-v1-bad" }), 400, "invalid_integration_token")
    expect(refused.error).toMatchObject({ details: { provider: "router", reason: "No auth credentials found" } })
    const after = await query(podium.databaseUrl, (sql) => sql`SELECT sealed_token FROM integrations WHERE provider = 'router'`)
    expect(after).toEqual(before)
  })

  it("a provider that fails is a 502 upstream_error", async () => {
    fake.failing = true
    try {
      const failed = await expectError(validate({ provider: "hub", token: hubToken }), 502, "upstream_error")
      expect(failed.error).toMatchObject({ details: { provider: "hub" } })
    } finally {
      fake.failing = false
    }
  })

  it("validates the request", async () => {
    for (const json of [{ provider: "openai", token: "x" }, { provider: "router", token: "" }, { provider: "router" }]) {
      // Payloads the contract forbids: the typed client will not send them.
      const reply = unchecked(podium, "POST", "/api/integrations/validate", { token: owner.session, json })
      await expectError(reply, 400, "validation_failed", JSON.stringify(json))
    }
  })

  it("needs an owner or admin session", async () => {
    await owner.api((c) => c.invites.invite({ payload: { email: "int-member@example.com" } }))
    const member = client(podium, await session("int-member"))
    await expectError(
      validate({ provider: "router", token: routerKey, business_id: owner.workspace }, member),
      403,
      "forbidden"
    )
    const apiTokenCaller = client(podium, await apiToken(owner.api, undefined, { name: "t" }))
    await expectError(validate({ provider: "router", token: routerKey }, apiTokenCaller), 401, "unauthorized")
  })
})

describe("checking hub datasets", () => {
  let writer: Caller
  beforeAll(async () => {
    writer = client(podium, await apiToken(owner.api, ["leaderboards:write"], { name: "writer" }))
  })
  const check = (payload: { dataset_url: string; business_id?: WorkspaceId }, api = writer) =>
    api((c) => c.datasets.hubCheck({ payload }))

  it("reports rows and splits of a public dataset", async () => {
    expect(await check({ dataset_url: "https://huggingface.co/datasets/acme/rows/viewer/default/train" })).toMatchObject({
      dataset_id: "acme/rows",
      business_id: owner.workspace,
      valid: true,
      private: false,
      rows: 150,
      splits: [{ name: "train", rows: 120 }, { name: "test", rows: 30 }],
      meets_min_rows: true
    })
    expect(await check({ dataset_url: "acme/tiny" })).toMatchObject({ rows: 12, meets_min_rows: false })
    expect(await check({ dataset_url: "hf://datasets/acme/unknown-size" })).toMatchObject({
      rows: null,
      meets_min_rows: false
    })
  })

  it("reads a private dataset with the workspace's hub integration", async () => {
    // The hub integration of this workspace was stored by the whoami test above.
    expect(await check({ dataset_url: "acme/private" })).toMatchObject({ private: true, rows: 500, used_integration: true })
    expect(fake.seen.at(-1)).toEqual({ path: "/api/datasets/acme/private", authorization: `Bearer ${hubToken}` })
  })

  it("a dataset the hub will not show is 404 dataset_not_found", async () => {
    const outsider = client(podium, await session("int-outsider"))
    await expectError(check({ dataset_url: "acme/private" }, outsider), 404, "dataset_not_found")
    await expectError(check({ dataset_url: "acme/missing" }), 404, "dataset_not_found")
  })

  it("rejects what is not a dataset URL", async () => {
    for (const url of ["https://huggingface.co/models/acme/x", "ftp://x/datasets/a/b", "not a url", "a/b/c"]) {
      await expectValidation(check({ dataset_url: url }), ["payload", "dataset_url"], url)
    }
  })

  it("an API token cannot name another workspace", async () => {
    const other = await signedIn(podium, "int-other")
    await expectError(check({ dataset_url: "acme/rows", business_id: other.workspace }), 403, "forbidden")
  })
})

describe("reading back and removing integrations", () => {
  const list = (api: Caller = owner.api, business_id?: WorkspaceId) =>
    api((c) => c.integrations.list({ query: business_id === undefined ? {} : { business_id } }))
  const remove = (provider: "router" | "hub", api: Caller = owner.api, business_id?: WorkspaceId) =>
    api((c) => c.integrations.remove({ params: { provider }, query: business_id === undefined ? {} : { business_id } }))
  const member = () => session("int-member").then((token) => client(podium, token))

  it("lists the stored integrations with the key's last four characters, never the key", async () => {
    const sealed = await query(podium.databaseUrl, (sql) =>
      sql<{ sealed_token: string; validated_at: Date }>`SELECT sealed_token, validated_at FROM integrations
        WHERE workspace_id = ${owner.workspace} ORDER BY provider`)
    const found = await list()
    expect(found.business_id).toBe(owner.workspace)
    expect(found.integrations.map((i) => [i.provider, i.key_hint])).toEqual([
      // The hub token is 15 characters: too short to give four of them away.
      ["hub", null],
      ["router", "…-key"]
    ])
    expect(found.integrations[1]!.account).toMatchObject({
      label: "sk-or-v1-goo...key",
      details: { usage: 1.5, is_free_tier: false }
    })
    expect(DateTime.toEpochMillis(found.integrations[1]!.validated_at)).toBe(sealed[1]!.validated_at.getTime())
    expect(found.integrations[0]!.validated_by).not.toBeNull()
    const text = JSON.stringify(found)
    for (const secret of [routerKey, hubToken, ...sealed.map((row) => row.sealed_token)]) expect(text).not.toContain(secret)
  })

  it("shows only the caller's workspace; another workspace's are refused", async () => {
    const other = await signedIn(podium, "int-reader")
    expect(await list(other.api)).toEqual({ business_id: other.workspace, integrations: [] })
    await expectError(list(other.api, owner.workspace), 403, "forbidden")
    await expectError(remove("router", other.api, owner.workspace), 403, "forbidden")
    expect((await list()).integrations).toHaveLength(2)
  })

  it("needs an owner or admin session, as validating does", async () => {
    const asMember = await member()
    await expectError(list(asMember, owner.workspace), 403, "forbidden")
    await expectError(remove("hub", asMember, owner.workspace), 403, "forbidden")
    const apiTokenCaller = client(podium, await apiToken(owner.api, undefined, { name: "reader" }))
    await expectError(list(apiTokenCaller), 401, "unauthorized")
    await expectError(remove("hub", apiTokenCaller), 401, "unauthorized")
    await expectError(unchecked(podium, "DELETE", "/api/integrations/openai", { token: owner.session }), 400, "validation_failed")
  })

  it("a removed hub token is no longer used: the private dataset is not found, the public one is read without it", async () => {
    // Read once first, so a kept copy of the integration would be in use.
    expect(await owner.api((c) => c.datasets.hubCheck({ payload: { dataset_url: "acme/private" } }))).toMatchObject({
      used_integration: true
    })
    const reply = await podium.request("DELETE", "/api/integrations/hub", { token: owner.session })
    expect(reply.status).toBe(204)
    expect(reply.text).toBe("")
    expect((await list()).integrations.map((i) => i.provider)).toEqual(["router"])
    await expectError(owner.api((c) => c.datasets.hubCheck({ payload: { dataset_url: "acme/private" } })), 404, "dataset_not_found")
    expect(fake.seen.at(-1)).toEqual({ path: "/api/datasets/acme/private", authorization: undefined })
    expect(await owner.api((c) => c.datasets.hubCheck({ payload: { dataset_url: "acme/rows" } }))).toMatchObject({
      used_integration: false
    })
    await expectError(remove("hub"), 404, "not_found")
  })

  it("removing the router too leaves nothing; validating it again stores it with its hint", async () => {
    await remove("router")
    expect(await query(podium.databaseUrl, (sql) => sql`SELECT 1 FROM integrations WHERE workspace_id = ${owner.workspace}`))
      .toEqual([])
    expect(await list()).toEqual({ business_id: owner.workspace, integrations: [] })
    await validate({ provider: "router", token: routerKey })
    expect((await list()).integrations.map((i) => [i.provider, i.key_hint])).toEqual([["router", "…-key"]])
  })
})
