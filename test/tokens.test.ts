import { DateTime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { randomUUID } from "node:crypto"
import type { UpdateTokenRequest } from "@podium/adapters-http/access/TokensApi"
import { TokenId, type WorkspaceId } from "@podium/domain/shared"
import { aToken, type NewToken, type SignedIn, signedIn } from "./support/Builders.ts"
import { type Caller, client, expectError, expectValidation, unchecked } from "./support/Client.ts"
import { type Podium, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

let podium: Podium
let owner: SignedIn

beforeAll(async () => {
  podium = await startPodium()
  owner = await signedIn(podium, "tokens-owner")
})
afterAll(() => podium.stop())

const create = (payload: NewToken, api: Caller = owner.api) => api((c) => c.tokens.create({ payload }))
const listed = async (api: Caller = owner.api, business_id?: WorkspaceId) =>
  (await api((c) => c.tokens.list({ query: business_id === undefined ? {} : { business_id } }))).tokens
const revoke = (token_id: TokenId, api: Caller = owner.api) => api((c) => c.tokens.revoke({ params: { token_id } }))
const remove = (token_id: TokenId, api: Caller = owner.api) => api((c) => c.tokens.remove({ params: { token_id } }))
/** A call that needs an API token with leaderboards:write (no hub is configured here: 502 once authenticated). */
const hubCheck = (secret: string) =>
  client(podium, secret)((c) => c.datasets.hubCheck({ payload: { dataset_url: "acme/rows" } }))

describe("creating API tokens", () => {
  it("returns the token and its secret once, with defaults", async () => {
    const created = await create({ name: "ci" })
    expect(created.secret).toMatch(/^pod_[A-Za-z0-9_-]{43}$/)
    expect(created.token).toMatchObject({
      name: "ci",
      business_id: owner.workspace,
      status: "active",
      expires_at: null,
      budget_limit: null,
      budget_reset_interval: null,
      last_used_at: null,
      revoked_at: null,
      prefix: created.secret.slice(0, 12)
    })
    expect(created.token.scopes).toHaveLength(8)
    // The wire format of timestamps: the typed client decodes them to DateTime.
    const raw = await podium.request("GET", "/api/tokens", { token: owner.session })
    const onWire = raw.body.tokens.find((t: { id: string }) => t.id === created.token.id)
    expect(onWire.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  })

  it("keeps scopes, expiry and budget as given", async () => {
    const before = Date.now()
    const { token } = await create({
      name: "scoped",
      scopes: ["models:read", "models:read", "leaderboards:inference"],
      expires_in: "7d",
      budget_limit: 12.5,
      budget_reset_interval: "weekly"
    })
    expect(token.scopes).toEqual(["models:read", "leaderboards:inference"])
    expect(token.budget_limit).toBe(12.5)
    expect(token.budget_reset_interval).toBe("weekly")
    const expires = DateTime.toEpochMillis(token.expires_at!)
    expect(expires - before).toBeGreaterThan(7 * 86_400_000 - 60_000)
    expect(expires - before).toBeLessThan(7 * 86_400_000 + 60_000)
  })

  it("rejects a reset interval without a budget limit", async () => {
    await expectValidation(create({ name: "half budget", budget_reset_interval: "daily" }), ["payload", "budget_reset_interval"])
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
      // Payloads the contract forbids: the typed client will not send them.
      const reply = unchecked(podium, "POST", "/api/tokens", { token: owner.session, json })
      await expectError(reply, 400, "validation_failed", JSON.stringify(json))
    }
  })

  it("stores no plain secret, and never shows it again", async () => {
    const created = await create({ name: "hidden" })
    const { secret } = created
    // The bytes on the wire, not the decoded view.
    expect((await podium.request("GET", "/api/tokens", { token: owner.session })).text).not.toContain(secret)
    const tokens = await listed()
    expect(tokens.map((t) => t.id)).toContain(created.token.id)
    expect(JSON.stringify(tokens)).not.toContain("secret")
    const rows = await query(podium.databaseUrl, (sql) => sql`SELECT * FROM api_tokens`)
    expect(rows.length).toBeGreaterThan(0)
    expect(JSON.stringify(rows)).not.toContain(secret)
    expect(JSON.stringify(rows)).not.toContain(secret.slice(12))
  })
})

describe("using, revoking and deleting API tokens", () => {
  it("records last use, and revocation stops the token at once", async () => {
    const created = await create(aToken(["leaderboards:write"], { name: "used" }))
    await expectError(hubCheck(created.secret), 502, "upstream_error") // authenticated; no hub is configured in this test
    const token = (await listed()).find((t) => t.id === created.token.id)
    expect(token?.last_used_at).not.toBeNull()

    const revoked = await revoke(created.token.id)
    expect(revoked.token.status).toBe("revoked")
    const again = await revoke(created.token.id)
    expect(again.token.revoked_at).toEqual(revoked.token.revoked_at)
    await expectError(hubCheck(created.secret), 401, "unauthorized")
  })

  it("an expired token is refused", async () => {
    const created = await create(aToken(["leaderboards:write"], { name: "expiring", expires_in: "1h" }))
    await query(podium.databaseUrl, (sql) =>
      sql`UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE id = ${created.token.id}`)
    const refused = await expectError(hubCheck(created.secret), 401, "unauthorized")
    expect(refused.error.message).toContain("expired")
    expect((await listed()).find((t) => t.id === created.token.id)?.status).toBe("expired")
  })

  it("a token without the scope gets 403 insufficient_scope", async () => {
    const created = await create(aToken(["leaderboards:read"], { name: "reader" }))
    const refused = await expectError(hubCheck(created.secret), 403, "insufficient_scope")
    expect(refused.error).toMatchObject({ details: { required_scope: "leaderboards:write" } })
  })

  it("delete removes the token and its access", async () => {
    const created = await create(aToken(["leaderboards:write"], { name: "doomed" }))
    expect(await remove(created.token.id)).toEqual({ id: created.token.id, deleted: true })
    await expectError(remove(created.token.id), 404, "not_found")
    await expectError(revoke(created.token.id), 404, "not_found")
    await expectError(hubCheck(created.secret), 401, "unauthorized")
  })
})

describe("workspaces and roles", () => {
  it("another workspace's token is 404, and its business_id is 403", async () => {
    const created = await create({ name: "private" })
    const stranger = await signedIn(podium, "tokens-stranger")
    await expectError(revoke(created.token.id, stranger.api), 404, "not_found", "revoke")
    await expectError(remove(created.token.id, stranger.api), 404, "not_found", "delete")
    await expectError(listed(stranger.api, owner.workspace), 403, "forbidden")
    await expectError(create({ name: "sneaky", business_id: owner.workspace }, stranger.api), 403, "forbidden")
    expect((await listed()).find((t) => t.id === created.token.id)?.status).toBe("active")
  })

  it("a member cannot manage tokens; an admin can", async () => {
    const boss = await signedIn(podium, "tokens-boss")
    const workspace = boss.workspace
    for (const [subject, role] of [["tokens-member", "member"], ["tokens-admin", "admin"]] as const) {
      await boss.api((c) => c.invites.invite({ payload: { email: `${subject}@example.com`, role, business_id: workspace } }))
    }
    const member = await signedIn(podium, "tokens-member")
    const admin = await signedIn(podium, "tokens-admin")
    const bossToken = await create({ name: "boss", business_id: workspace }, boss.api)

    await expectError(listed(member.api, workspace), 403, "forbidden", "member lists")
    await expectError(create({ name: "m", business_id: workspace }, member.api), 403, "forbidden", "member creates")
    await expectError(revoke(bossToken.token.id, member.api), 403, "forbidden", "member revokes")

    expect(await listed(admin.api, workspace)).toHaveLength(1)
    await create({ name: "a", business_id: workspace }, admin.api)
    await revoke(bossToken.token.id, admin.api)
  })

  it("a token belongs to the workspace: it outlives its creator's membership, and the list shows who made it", async () => {
    const boss = await signedIn(podium, "tokens-keeper")
    const workspace = boss.workspace
    await boss.api((c) => c.invites.invite({ payload: { email: "tokens-leaver@example.com", role: "admin", business_id: workspace } }))
    const leaver = await signedIn(podium, "tokens-leaver")
    const members = (await boss.api((c) => c.invites.list({ query: { business_id: workspace } }))).members
    const leaverId = members.find((m) => m.email === "tokens-leaver@example.com")!.user_id
    const made = await create({ name: "leaver's", business_id: workspace }, leaver.api)
    expect(made.token).toMatchObject({ created_by: leaverId, created_by_email: "tokens-leaver@example.com", created_by_member: true })

    await boss.api((c) => c.invites.remove({ payload: { business_id: workspace, user_id: leaverId } }))
    await expectError(hubCheck(made.secret), 502, "upstream_error", "still works") // authenticated: only the hub is missing
    const shown = (await listed(boss.api, workspace)).find((t) => t.id === made.token.id)
    expect(shown).toMatchObject({ created_by: leaverId, created_by_email: "tokens-leaver@example.com", created_by_member: false })
    const revoked = await revoke(made.token.id, boss.api)
    expect(revoked.token).toMatchObject({ status: "revoked", created_by_email: "tokens-leaver@example.com", created_by_member: false })
    await expectError(hubCheck(made.secret), 401, "unauthorized", "revoked")
  })

  it("a token made on the command line (no creator) says so", async () => {
    const made = await create({ name: "bootstrap" })
    await query(podium.databaseUrl, (sql) => sql`UPDATE api_tokens SET created_by = NULL WHERE id = ${made.token.id}`)
    const shown = (await listed()).find((t) => t.id === made.token.id)
    expect(shown).toMatchObject({ created_by: null, created_by_email: null, created_by_member: null })
  })

  it("an out-of-range business_id is a validation error", async () => {
    // A query the contract forbids: the typed client will not send it.
    const reply = unchecked(podium, "GET", "/api/tokens?business_id=nope", { token: owner.session })
    await expectValidation(reply, ["query", "business_id"])
  })
})

type UpdateToken = typeof UpdateTokenRequest.Type

describe("changing API tokens", () => {
  const update = (token_id: TokenId, payload: UpdateToken, api: Caller = owner.api) =>
    api((c) => c.tokens.update({ params: { token_id }, payload }))

  it("changes name, expiry and budget, never scopes; the list and the answer agree", async () => {
    const { secret, token } = await create(aToken(["leaderboards:write"], { name: "before", expires_in: "1h" }))
    expect(token).toMatchObject({ budget_spent_usd: null, budget_remaining_usd: null, budget_resets_at: null })
    const expiry = DateTime.add(DateTime.nowUnsafe(), { days: 30 })
    const changed = (await update(token.id, {
      name: "after",
      expires_at: expiry,
      budget_limit: 2.5,
      budget_reset_interval: "monthly"
    })).token
    const monthStart = DateTime.startOf(DateTime.nowUnsafe(), "month")
    expect(changed).toMatchObject({
      id: token.id,
      name: "after",
      scopes: ["leaderboards:write"],
      status: "active",
      budget_limit: 2.5,
      budget_reset_interval: "monthly",
      budget_spent_usd: "0",
      budget_reserved_usd: "0",
      budget_remaining_usd: "2.5"
    })
    expect(DateTime.toEpochMillis(changed.expires_at!)).toBe(DateTime.toEpochMillis(expiry))
    expect(DateTime.formatIso(changed.budget_period_start!)).toBe(DateTime.formatIso(monthStart))
    expect(DateTime.formatIso(changed.budget_resets_at!)).toBe(DateTime.formatIso(DateTime.add(monthStart, { months: 1 })))
    expect((await listed()).find((t) => t.id === token.id)).toEqual(changed)

    // only what is given changes; null clears
    const renamed = (await update(token.id, { name: "again" })).token
    expect(renamed).toMatchObject({ name: "again", budget_limit: 2.5, budget_reset_interval: "monthly" })
    const cleared = (await update(token.id, { expires_at: null, budget_limit: null, budget_reset_interval: null })).token
    expect(cleared).toMatchObject({ expires_at: null, budget_limit: null, budget_reset_interval: null, budget_spent_usd: null })

    // scopes are not part of the change: a scopes field is ignored, the token keeps its scopes
    const reply = await podium.request("PATCH", `/api/tokens/${token.id}`, {
      token: owner.session,
      json: { name: "escalate", scopes: ["leaderboards:write", "models:write"] }
    })
    expect(reply.status, reply.text).toBe(200)
    expect(reply.body.token.scopes).toEqual(["leaderboards:write"])
    await expectError(hubCheck(secret), 502, "upstream_error") // still authenticates with its one scope
  })

  it("an expired token given a later expiry works again; a revoked one stays revoked", async () => {
    const { secret, token } = await create(aToken(["leaderboards:write"], { name: "revived", expires_in: "1h" }))
    await query(podium.databaseUrl, (sql) =>
      sql`UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE id = ${token.id}`)
    await expectError(hubCheck(secret), 401, "unauthorized", "expired")
    const later = (await update(token.id, { expires_at: DateTime.add(DateTime.nowUnsafe(), { hours: 1 }) })).token
    expect(later.status).toBe("active")
    await expectError(hubCheck(secret), 502, "upstream_error", "works again")

    await revoke(token.id)
    expect((await update(token.id, { expires_at: null })).token.status).toBe("revoked")
    await expectError(hubCheck(secret), 401, "unauthorized", "revoked")
  })

  it("refuses bad values with 400 and changes nothing", async () => {
    const { token } = await create({ name: "steady", budget_limit: 1, budget_reset_interval: "daily" })
    for (const json of [
      { budget_limit: -1 },
      { budget_reset_interval: "hourly" },
      { expires_at: "yesterday" },
      { name: "   " },
      { budget_limit: "1" }
    ]) {
      // Payloads the contract forbids: the typed client will not send them.
      const reply = unchecked(podium, "PATCH", `/api/tokens/${token.id}`, { token: owner.session, json })
      await expectError(reply, 400, "validation_failed", JSON.stringify(json))
    }
    await expectValidation(update(token.id, { expires_at: DateTime.subtract(DateTime.nowUnsafe(), { minutes: 1 }) }), [
      "payload",
      "expires_at"
    ])
    // a reset interval needs a limit: clearing the limit alone leaves the daily reset without one
    await expectValidation(update(token.id, { budget_limit: null }), ["payload", "budget_limit"])
    const unchanged = (await listed()).find((t) => t.id === token.id)
    expect(unchanged).toMatchObject({ name: "steady", budget_limit: 1, budget_reset_interval: "daily", expires_at: null })
  })

  it("is 404 for an unknown token and another workspace's, 403 for a member, 401 for an API token", async () => {
    const { secret, token } = await create({ name: "guarded" })
    await expectError(update(TokenId.make(randomUUID()), { name: "x" }), 404, "not_found", "unknown")
    const stranger = await signedIn(podium, "tokens-patch-stranger")
    await expectError(update(token.id, { name: "taken" }, stranger.api), 404, "not_found", "stranger")

    const boss = await signedIn(podium, "tokens-patch-boss")
    await boss.api((c) =>
      c.invites.invite({ payload: { email: "tokens-patch-member@example.com", role: "member", business_id: boss.workspace } })
    )
    const member = await signedIn(podium, "tokens-patch-member")
    const bossToken = await create({ name: "boss's", business_id: boss.workspace }, boss.api)
    await expectError(update(bossToken.token.id, { name: "mine" }, member.api), 403, "forbidden", "member")
    // the management routes take sessions only: a token cannot change itself or another
    await expectError(update(token.id, { name: "self" }, client(podium, secret)), 401, "unauthorized", "API token")
    expect((await listed()).find((t) => t.id === token.id)?.name).toBe("guarded")
    expect((await listed(boss.api, boss.workspace)).find((t) => t.id === bossToken.token.id)?.name).toBe("boss's")
  })

  it("a new reset interval carries the spend and the reservations in flight into the new period", async () => {
    const { token } = await create({ name: "lifetime", budget_limit: 10 }) // no reset: the window starts at 1970
    const today = DateTime.startOf(DateTime.nowUnsafe(), "day")
    const reservation = randomUUID()
    await query(podium.databaseUrl, (sql) =>
      sql`INSERT INTO token_spend (token_id, window_start, settled_usd, reserved_usd)
          VALUES (${token.id}, to_timestamp(0), 0.5, 0.25),
                 (${token.id}, ${DateTime.toDate(today)}, 9, 0)`) // stale: from an earlier daily setting
    await query(podium.databaseUrl, (sql) =>
      sql`INSERT INTO token_reservations (id, token_id, window_start, amount_usd, expires_at)
          VALUES (${reservation}, ${token.id}, to_timestamp(0), 0.25, now() + interval '5 minutes')`)
    expect((await listed()).find((t) => t.id === token.id)).toMatchObject({
      budget_spent_usd: "0.5",
      budget_reserved_usd: "0.25",
      budget_remaining_usd: "9.25",
      budget_period_start: null,
      budget_resets_at: null
    })
    const daily = (await update(token.id, { budget_reset_interval: "daily" })).token
    expect(daily).toMatchObject({ budget_spent_usd: "0.5", budget_reserved_usd: "0.25", budget_remaining_usd: "9.25" })
    expect(DateTime.formatIso(daily.budget_period_start!)).toBe(DateTime.formatIso(today))
    const rows = await query(podium.databaseUrl, (sql) =>
      sql`SELECT s.window_start, s.settled_usd::text AS settled, r.window_start AS held_in
          FROM token_spend s LEFT JOIN token_reservations r ON r.token_id = s.token_id AND r.id = ${reservation}
          WHERE s.token_id = ${token.id}`)
    expect(rows.map((r) => [(r["window_start"] as Date).toISOString(), r["settled"], (r["held_in"] as Date).toISOString()]))
      .toEqual([[DateTime.formatIso(today), "0.5", DateTime.formatIso(today)]])
  })

  it("two changes at once both land", async () => {
    const { token } = await create({ name: "raced", budget_limit: 1, budget_reset_interval: "daily" })
    for (let round = 0; round < 10; round++) {
      await Promise.all([
        update(token.id, { name: `raced ${round}` }),
        update(token.id, { budget_limit: round + 2 }),
        update(token.id, { expires_at: DateTime.add(DateTime.nowUnsafe(), { days: round + 1 }) })
      ])
      const shown = (await listed()).find((t) => t.id === token.id)!
      expect(shown.name, `round ${round}`).toBe(`raced ${round}`)
      expect(shown.budget_limit, `round ${round}`).toBe(round + 2)
      expect(shown.budget_reset_interval).toBe("daily")
      expect(shown.expires_at).not.toBeNull()
    }
  })
})
