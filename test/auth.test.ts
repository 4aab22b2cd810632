import { SignJWT, UnsecuredJWT } from "jose"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Podium, session, sessionSecret, startPodium } from "./support/Podium.ts"

let podium: Podium

beforeAll(async () => {
  podium = await startPodium()
})
afterAll(() => podium.stop())

const expectUnauthorized = async (token: string | undefined) => {
  const reply = await podium.request("GET", "/api/tokens", { token })
  expect(reply.status).toBe(401)
  expect(reply.body.error.code).toBe("unauthorized")
  expect(reply.headers.get("www-authenticate")).toBe("Bearer")
  return reply
}

describe("session tokens", () => {
  it("a valid session signs the user in and creates their personal workspace", async () => {
    const token = await session("auth-first")
    const first = await podium.request("GET", "/api/tokens", { token })
    expect(first.status).toBe(200)
    expect(first.body.tokens).toEqual([])
    const second = await podium.request("GET", "/api/tokens", { token })
    expect(second.body.business_id).toBe(first.body.business_id)
    const members = await podium.request("GET", "/api/invite-user", { token })
    expect(members.body.members).toEqual([
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
    const reply = await expectUnauthorized(expired)
    expect(reply.body.error.message).toContain("exp")
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
    const owner = await session("auth-token-owner")
    const created = await podium.request("POST", "/api/tokens", { token: owner, json: { name: "ci" } })
    const reply = await expectUnauthorized(created.body.secret)
    expect(reply.body.error.message).toContain("session")
  })
})

describe("API tokens", () => {
  it("an unknown, revoked or expired API token gets 401", async () => {
    const owner = await session("auth-revoker")
    const hubCheck = (token: string) =>
      podium.request("POST", "/api/datasets/hub/check", {
        token,
        json: { dataset_url: "https://huggingface.co/datasets/acme/rows" }
      })
    const unknown = await hubCheck("pod_unknownunknownunknownunknownunknownunknow")
    expect(unknown.status).toBe(401)
    expect(unknown.headers.get("www-authenticate")).toBe("Bearer")
    const created = await podium.request("POST", "/api/tokens", { token: owner, json: { name: "soon revoked" } })
    const revoked = await podium.request("POST", `/api/tokens/${created.body.token.id}/revoke`, { token: owner })
    expect(revoked.status).toBe(200)
    expect(revoked.body.token.status).toBe("revoked")
    const reply = await hubCheck(created.body.secret)
    expect(reply.status).toBe(401)
    expect(reply.body.error.message).toContain("revoked")
  })
})
