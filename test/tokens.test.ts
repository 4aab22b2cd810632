import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Podium, session, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

let podium: Podium
let owner: string
let ownerWorkspace: string

beforeAll(async () => {
  podium = await startPodium()
  owner = await session("tokens-owner")
  ownerWorkspace = (await podium.request("GET", "/api/tokens", { token: owner })).body.business_id
})
afterAll(() => podium.stop())

const create = (json: Record<string, unknown>, token = owner) => podium.request("POST", "/api/tokens", { token, json })

describe("creating API tokens", () => {
  it("returns the token and its secret once, with defaults", async () => {
    const reply = await create({ name: "ci" })
    expect(reply.status).toBe(201)
    expect(reply.body.secret).toMatch(/^pod_[A-Za-z0-9_-]{43}$/)
    expect(reply.body.token).toMatchObject({
      name: "ci",
      business_id: ownerWorkspace,
      status: "active",
      expires_at: null,
      budget_limit: null,
      budget_reset_interval: null,
      last_used_at: null,
      revoked_at: null,
      prefix: reply.body.secret.slice(0, 12)
    })
    expect(reply.body.token.scopes).toHaveLength(8)
    expect(reply.body.token.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  })

  it("keeps scopes, expiry and budget as given", async () => {
    const before = Date.now()
    const reply = await create({
      name: "scoped",
      scopes: ["models:read", "models:read", "leaderboards:inference"],
      expires_in: "7d",
      budget_limit: 12.5,
      budget_reset_interval: "weekly"
    })
    expect(reply.status).toBe(201)
    expect(reply.body.token.scopes).toEqual(["models:read", "leaderboards:inference"])
    expect(reply.body.token.budget_limit).toBe(12.5)
    expect(reply.body.token.budget_reset_interval).toBe("weekly")
    const expires = Date.parse(reply.body.token.expires_at)
    expect(expires - before).toBeGreaterThan(7 * 86_400_000 - 60_000)
    expect(expires - before).toBeLessThan(7 * 86_400_000 + 60_000)
  })

  it("rejects a reset interval without a budget limit", async () => {
    const reply = await create({ name: "half budget", budget_reset_interval: "daily" })
    expect(reply.status).toBe(400)
    expect(reply.body.error.code).toBe("validation_failed")
    expect(reply.body.error.details.issues[0].path).toEqual(["budget_reset_interval"])
  })

  it("rejects negative budgets, unknown scopes and bad expiries", async () => {
    for (const json of [
      { name: "x", budget_limit: -1 },
      { name: "x", scopes: ["admin"] },
      { name: "x", scopes: [] }, // only an omitted list means every scope
      { name: "x", expires_in: "2w" },
      { name: "   " },
      {}
    ]) {
      const reply = await create(json)
      expect(reply.status, JSON.stringify(json)).toBe(400)
      expect(reply.body.error.code).toBe("validation_failed")
    }
  })

  it("stores no plain secret, and never shows it again", async () => {
    const reply = await create({ name: "hidden" })
    const secret: string = reply.body.secret
    const listed = await podium.request("GET", "/api/tokens", { token: owner })
    expect(listed.text).not.toContain(secret)
    expect(listed.body.tokens.map((t: { id: string }) => t.id)).toContain(reply.body.token.id)
    expect(JSON.stringify(listed.body.tokens)).not.toContain("secret")
    const rows = await query(podium.databaseUrl, (sql) => sql`SELECT * FROM api_tokens`)
    expect(rows.length).toBeGreaterThan(0)
    expect(JSON.stringify(rows)).not.toContain(secret)
    expect(JSON.stringify(rows)).not.toContain(secret.slice(12))
  })
})

describe("using, revoking and deleting API tokens", () => {
  it("records last use, and revocation stops the token at once", async () => {
    const created = await create({ name: "used", scopes: ["leaderboards:write"] })
    const check = () =>
      podium.request("POST", "/api/datasets/hub/check", {
        token: created.body.secret,
        json: { dataset_url: "acme/rows" }
      })
    const used = await check()
    expect(used.status).toBe(502) // authenticated; no hub is configured in this test
    expect(used.body.error.code).toBe("upstream_error")
    const listed = await podium.request("GET", "/api/tokens", { token: owner })
    const token = listed.body.tokens.find((t: { id: string }) => t.id === created.body.token.id)
    expect(token.last_used_at).not.toBeNull()

    const revoked = await podium.request("POST", `/api/tokens/${created.body.token.id}/revoke`, { token: owner })
    expect(revoked.status).toBe(200)
    expect(revoked.body.token.status).toBe("revoked")
    const again = await podium.request("POST", `/api/tokens/${created.body.token.id}/revoke`, { token: owner })
    expect(again.body.token.revoked_at).toBe(revoked.body.token.revoked_at)
    expect((await check()).status).toBe(401)
  })

  it("an expired token is refused", async () => {
    const created = await create({ name: "expiring", expires_in: "1h", scopes: ["leaderboards:write"] })
    await query(podium.databaseUrl, (sql) =>
      sql`UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE id = ${created.body.token.id}`)
    const reply = await podium.request("POST", "/api/datasets/hub/check", {
      token: created.body.secret,
      json: { dataset_url: "acme/rows" }
    })
    expect(reply.status).toBe(401)
    expect(reply.body.error.message).toContain("expired")
    const listed = await podium.request("GET", "/api/tokens", { token: owner })
    expect(listed.body.tokens.find((t: { id: string }) => t.id === created.body.token.id).status).toBe("expired")
  })

  it("a token without the scope gets 403 insufficient_scope", async () => {
    const created = await create({ name: "reader", scopes: ["leaderboards:read"] })
    const reply = await podium.request("POST", "/api/datasets/hub/check", {
      token: created.body.secret,
      json: { dataset_url: "acme/rows" }
    })
    expect(reply.status).toBe(403)
    expect(reply.body.error).toMatchObject({ code: "insufficient_scope", details: { required_scope: "leaderboards:write" } })
  })

  it("delete removes the token and its access", async () => {
    const created = await create({ name: "doomed", scopes: ["leaderboards:write"] })
    const deleted = await podium.request("DELETE", `/api/tokens/${created.body.token.id}`, { token: owner })
    expect(deleted.status).toBe(200)
    expect(deleted.body).toEqual({ id: created.body.token.id, deleted: true })
    expect((await podium.request("DELETE", `/api/tokens/${created.body.token.id}`, { token: owner })).status).toBe(404)
    expect((await podium.request("POST", `/api/tokens/${created.body.token.id}/revoke`, { token: owner })).status)
      .toBe(404)
    const reply = await podium.request("POST", "/api/datasets/hub/check", {
      token: created.body.secret,
      json: { dataset_url: "acme/rows" }
    })
    expect(reply.status).toBe(401)
  })
})

describe("workspaces and roles", () => {
  it("another workspace's token is 404, and its business_id is 403", async () => {
    const created = await create({ name: "private" })
    const stranger = await session("tokens-stranger")
    for (const [method, path] of [["POST", `/api/tokens/${created.body.token.id}/revoke`], ["DELETE", `/api/tokens/${created.body.token.id}`]]) {
      const reply = await podium.request(method!, path!, { token: stranger })
      expect(reply.status).toBe(404)
      expect(reply.body.error.code).toBe("not_found")
    }
    const list = await podium.request("GET", `/api/tokens?business_id=${ownerWorkspace}`, { token: stranger })
    expect(list.status).toBe(403)
    expect(list.body.error.code).toBe("forbidden")
    const make = await create({ name: "sneaky", business_id: ownerWorkspace }, stranger)
    expect(make.status).toBe(403)
    const stillActive = await podium.request("GET", "/api/tokens", { token: owner })
    expect(stillActive.body.tokens.find((t: { id: string }) => t.id === created.body.token.id).status).toBe("active")
  })

  it("a member cannot manage tokens; an admin can", async () => {
    const boss = await session("tokens-boss")
    const workspace = (await podium.request("GET", "/api/tokens", { token: boss })).body.business_id
    for (const [subject, role] of [["tokens-member", "member"], ["tokens-admin", "admin"]] as const) {
      const invited = await podium.request("POST", "/api/invite-user", {
        token: boss,
        json: { email: `${subject}@example.com`, role, business_id: workspace }
      })
      expect(invited.status).toBe(200)
    }
    const member = await session("tokens-member")
    const admin = await session("tokens-admin")
    const bossToken = await create({ name: "boss", business_id: workspace }, boss)

    const memberList = await podium.request("GET", `/api/tokens?business_id=${workspace}`, { token: member })
    expect(memberList.status).toBe(403)
    expect(memberList.body.error.code).toBe("forbidden")
    expect((await create({ name: "m", business_id: workspace }, member)).status).toBe(403)
    expect((await podium.request("POST", `/api/tokens/${bossToken.body.token.id}/revoke`, { token: member })).status)
      .toBe(403)

    const adminList = await podium.request("GET", `/api/tokens?business_id=${workspace}`, { token: admin })
    expect(adminList.status).toBe(200)
    expect(adminList.body.tokens).toHaveLength(1)
    expect((await create({ name: "a", business_id: workspace }, admin)).status).toBe(201)
    expect((await podium.request("POST", `/api/tokens/${bossToken.body.token.id}/revoke`, { token: admin })).status)
      .toBe(200)
  })

  it("an out-of-range business_id is a validation error", async () => {
    const reply = await podium.request("GET", "/api/tokens?business_id=nope", { token: owner })
    expect(reply.status).toBe(400)
    expect(reply.body.error.details.issues[0].path).toEqual(["query", "business_id"])
  })
})
