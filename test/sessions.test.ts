import { SignJWT } from "jose"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { WorkspaceId } from "@podium/domain/shared"
import { type Caller, client, expectError } from "./support/Client.ts"
import { type Podium, session, sessionSecret, startPodium } from "./support/Podium.ts"

/**
 * What a signed session's claims must hold beyond a good signature: an email counts as verified
 * (and so takes invites) only with `email_verified: true`; `exp` and `iat` are required, a session
 * lasts at most SESSION_MAX_AGE from `iat`, clocks may differ by 60 s; `sub` and `email` are text
 * the database can store.
 */

let podium: Podium
let owner: Caller
let workspace: WorkspaceId

beforeAll(async () => {
  podium = await startPodium()
  owner = client(podium, await session("sessions-owner"))
  workspace = (await owner((c) => c.invites.list({ query: {} }))).business_id
})
afterAll(() => podium.stop())

const now = () => Math.floor(Date.now() / 1000)
const hour = 3600

/** A session signed with the test secret: exactly these claims, `sub` included, nothing added. */
const signed = (claims: Record<string, unknown>, secret = sessionSecret) =>
  new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode(secret))

/** Any session route, called with `token`. */
const signIn = (token: string) => client(podium, token)((c) => c.tokens.list({ query: {} }))

const refused = async (token: Promise<string>, says: RegExp) => {
  const failure = await expectError(signIn(await token), 401, "unauthorized")
  expect(failure.error.message).toMatch(says)
}

describe("an invite is accepted only by an email the provider marks verified (email_verified: true)", () => {
  const variants: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
    ["false (the boolean)", { email_verified: false }],
    ["\"false\" (a string)", { email_verified: "false" }],
    ["\"no\"", { email_verified: "no" }],
    ["\"true\" (a string)", { email_verified: "true" }],
    ["0", { email_verified: 0 }],
    ["1", { email_verified: 1 }],
    ["null", { email_verified: null }],
    ["missing", {}]
  ]

  it.each(variants)("email_verified %s: the invite waits and the 403 says why", async (label, claim) => {
    const email = `unverified-${label.replace(/\W/g, "")}@example.com`
    const sent = await owner((c) => c.invites.invite({ payload: { email, role: "admin", business_id: workspace } }))
    const invitee = client(podium, await signed({ sub: `sessions-${email}`, email, ...claim, iat: now(), exp: now() + hour }))
    const failure = await expectError(invitee((c) => c.invites.list({ query: { business_id: workspace } })), 403, "forbidden")
    expect(failure.error.message).toMatch(/email_verified/)
    const pending = (await owner((c) => c.invites.list({ query: { business_id: workspace } }))).invites
    expect(pending.map((i) => i.id)).toContain(sent.invite.id)
  })

  it("email_verified true: the invite is accepted", async () => {
    const email = "verified-joiner@example.com"
    await owner((c) => c.invites.invite({ payload: { email, role: "admin", business_id: workspace } }))
    const joiner = client(podium, await signed({ sub: "sessions-verified", email, email_verified: true, iat: now(), exp: now() + hour }))
    const joined = await joiner((c) => c.invites.list({ query: { business_id: workspace } }))
    expect(joined.members.find((m) => m.email === email)?.role).toBe("admin")
  })
})

describe("SESSION_TRUSTED_EMAIL_ISSUERS: providers that send no email_verified", () => {
  it("a listed issuer's email counts as verified when the claim is missing, never when it says otherwise", async () => {
    const trusting = await startPodium({ SESSION_TRUSTED_EMAIL_ISSUERS: "https://other.example.com, https://id.example.com" })
    try {
      const boss = client(trusting, await session("trusting-owner"))
      const business_id = (await boss((c) => c.invites.list({ query: {} }))).business_id
      const joins = async (email: string, claims: Record<string, unknown>) => {
        await boss((c) => c.invites.invite({ payload: { email, role: "admin", business_id } }))
        const token = await signed({ sub: `trusting-${email}`, email, ...claims, iat: now(), exp: now() + hour })
        return client(trusting, token)((c) => c.invites.list({ query: { business_id } })).then(() => true, () => false)
      }
      expect(await joins("listed@example.com", { iss: "https://id.example.com" })).toBe(true)
      expect(await joins("unlisted@example.com", { iss: "https://elsewhere.example.com" })).toBe(false)
      expect(await joins("no-issuer@example.com", {})).toBe(false)
      expect(await joins("said-false@example.com", { iss: "https://id.example.com", email_verified: false })).toBe(false)
      expect(await joins("said-string@example.com", { iss: "https://id.example.com", email_verified: "false" })).toBe(false)
    } finally {
      await trusting.stop()
    }
  })
})

describe("a session's lifetime", () => {
  it("refuses a session without exp", () => refused(signed({ sub: "no-exp", iat: now() }), /"exp"/))
  it("refuses a session without iat", () => refused(signed({ sub: "no-iat", exp: now() + hour }), /"iat"/))
  it("refuses exp 100 years ahead (longer than SESSION_MAX_AGE from iat)", () =>
    refused(signed({ sub: "century", iat: now(), exp: now() + 100 * 365 * 24 * hour }), /SESSION_MAX_AGE/))
  it("refuses iat 10 years ahead", () =>
    refused(signed({ sub: "from-the-future", iat: now() + 10 * 365 * 24 * hour, exp: now() + 10 * 365 * 24 * hour + hour }), /"iat"/))
  it("refuses a session issued 25 hours ago that has not expired (it outlived 24 h)", () =>
    refused(signed({ sub: "outlived", iat: now() - 25 * hour, exp: now() + hour }), /SESSION_MAX_AGE/))
  it("refuses exp more than 60 s in the past", () =>
    refused(signed({ sub: "expired", iat: now() - hour, exp: now() - 120 }), /"exp"/))

  it("accepts a 24-hour session, and clocks up to 60 s apart (iat and nbf ahead, exp just passed)", async () => {
    await signIn(await signed({ sub: "whole-day", iat: now(), exp: now() + 24 * hour }))
    await signIn(await signed({ sub: "clock-ahead", iat: now() + 30, nbf: now() + 30, exp: now() + hour }))
    await signIn(await signed({ sub: "just-expired", iat: now() - hour, exp: now() - 30 }))
  })

  it("SESSION_MAX_AGE sets the longest session", async () => {
    const longer = await startPodium({ SESSION_MAX_AGE: String(48 * hour) })
    try {
      const twoDays = await signed({ sub: "two-days", iat: now(), exp: now() + 48 * hour })
      await client(longer, twoDays)((c) => c.tokens.list({ query: {} }))
      await expectError(signIn(twoDays), 401, "unauthorized")
    } finally {
      await longer.stop()
    }
  })
})

describe("sub and email are text the database can store", () => {
  it.each([
    ["sub", "U+0000", { sub: "null\u0000byte" }],
    ["sub", "a lone surrogate", { sub: "lone\ud800surrogate" }],
    ["email", "U+0000", { sub: "email-null", email: "null\u0000@example.com", email_verified: true }],
    ["email", "a lone surrogate", { sub: "email-lone", email: "lone\udc00@example.com", email_verified: true }]
  ])("%s with %s is 401, not 500", (claim, _what, claims) =>
    refused(signed({ ...claims, iat: now(), exp: now() + hour }), new RegExp(claim)))
})
