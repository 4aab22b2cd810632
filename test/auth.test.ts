import { SignJWT, UnsecuredJWT } from "jose"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { apiToken } from "./support/Builders.ts"
import { client, expectError } from "./support/Client.ts"
import { type Podium, session, sessionSecret, startPodium } from "./support/Podium.ts"

let podium: Podium

beforeAll(async () => {
  podium = await startPodium()
})
afterAll(() => podium.stop())

/** A session route called with `token` (none: no credential) must be 401 with the bearer challenge. */
const expectUnauthorized = async (token: string | undefined) => {
  const refused = await expectError(client(podium, token)((c) => c.tokens.list({ query: {} })), 401, "unauthorized")
  expect(refused.headers["www-authenticate"]).toBe("Bearer")
  return refused
}

describe("session tokens", () => {
  it("a valid session signs the user in and creates their personal workspace", async () => {
    const api = client(podium, await session("auth-first"))
    const first = await api((c) => c.tokens.list({ query: {} }))
    expect(first.tokens).toEqual([])
    const second = await api((c) => c.tokens.list({ query: {} }))
    expect(second.business_id).toBe(first.business_id)
    const { members } = await api((c) => c.invites.list({ query: {} }))
    expect(members).toEqual([
      expect.objectContaining({ role: "owner", email: "auth-first@example.com" })
    ])
  })

  it("rejects a missing credential", () => expectUnauthorized(undefined))
  it("rejects a malformed token", () => expectUnauthorized("not.a.jwt"))
  it("rejects an expired token", async () => {
    const expired = await new SignJWT({ email: "x@example.com" })
      .setProtectedHeader({ alg: "HS256" })
      .setSubject("expired-user")
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(new TextEncoder().encode(sessionSecret))
    const refused = await expectUnauthorized(expired)
    expect(refused.error.message).toContain("exp")
  })
  it("rejects a token signed with another secret", async () =>
    expectUnauthorized(await session("wrong-key", { secret: "another-secret-that-is-also-long-enough-000" })))
  it("rejects a token signed with another algorithm", async () =>
    expectUnauthorized(await session("wrong-alg", { alg: "HS512" })))
  it("rejects an unsigned (alg none) token", () =>
    expectUnauthorized(new UnsecuredJWT({ email: "none@example.com" }).setSubject("none-user").setExpirationTime("1h").encode()))
  it("rejects a token without a subject", async () => {
    const noSub = await new SignJWT({ email: "nosub@example.com" })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode(sessionSecret))
    await expectUnauthorized(noSub)
  })
  it("API tokens are not accepted on session routes", async () => {
    const owner = client(podium, await session("auth-token-owner"))
    const refused = await expectUnauthorized(await apiToken(owner, undefined, { name: "ci" }))
    expect(refused.error.message).toContain("session")
  })
})

describe("API tokens", () => {
  it("an unknown, revoked or expired API token gets 401", async () => {
    const owner = client(podium, await session("auth-revoker"))
    const hubCheck = (token: string) =>
      client(podium, token)((c) =>
        c.datasets.hubCheck({ payload: { dataset_url: "https://huggingface.co/datasets/acme/rows" } })
      )
    const unknown = await expectError(hubCheck("pod_unknownunknownunknownunknownunknownunknow"), 401, "unauthorized")
    expect(unknown.headers["www-authenticate"]).toBe("Bearer")
    const created = await owner((c) => c.tokens.create({ payload: { name: "soon revoked" } }))
    const revoked = await owner((c) => c.tokens.revoke({ params: { token_id: created.token.id } }))
    expect(revoked.token.status).toBe("revoked")
    const refused = await expectError(hubCheck(created.secret), 401, "unauthorized")
    expect(refused.error.message).toContain("revoked")
  })
})
