import { DateTime, Duration } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { InviteId, WorkspaceId } from "../shared/index.ts"
import { create, Invite } from "./Invite.ts"
import { afterAttempt, backoff, compose, maxAttempts, worthSending } from "./InviteMail.ts"

const t0 = DateTime.makeUnsafe("2026-11-21T10:00:00.000Z")
const invite = create({
  id: "0190a000-0000-7000-8000-000000000001" as InviteId,
  workspaceId: "0190a000-0000-7000-8000-000000000002" as WorkspaceId,
  email: "a@example.com",
  role: "admin",
  invitedBy: null,
  redirectTo: null,
  now: t0
})


describe("invite mail delivery policy", () => {
  it("backs off 2 s, 4 s, 8 s ... up to 10 minutes", () => {
    expect([1, 2, 3].map((n) => Duration.toSeconds(backoff(n)))).toEqual([2, 4, 8])
    expect(Duration.toMinutes(backoff(20))).toBe(10)
    fc.assert(fc.property(fc.integer({ min: 1, max: 60 }), (n) => {
      expect(Duration.toMillis(backoff(n + 1))).toBeGreaterThanOrEqual(Duration.toMillis(backoff(n)))
      expect(Duration.toMinutes(backoff(n))).toBeLessThanOrEqual(10)
    }))
  })

  it("a failure stays queued until the last attempt, then fails; a success is sent", () => {
    expect(afterAttempt(1, { _tag: "Failed", reason: "busy" })).toEqual({ status: "queued", lastError: "busy" })
    expect(afterAttempt(maxAttempts, { _tag: "Failed", reason: "busy" })).toEqual({ status: "failed", lastError: "busy" })
    expect(afterAttempt(maxAttempts, { _tag: "Sent" })).toEqual({ status: "sent", lastError: null })
  })

  it("sends only while the invite can be accepted and was not sent yet", () => {
    expect(worthSending(invite, t0)).toBe(true)
    expect(worthSending(invite, DateTime.add(t0, { days: 8 }))).toBe(false)
    expect(worthSending(new Invite({ ...invite, status: "revoked" }), t0)).toBe(false)
    expect(worthSending(new Invite({ ...invite, mail_status: "sent" }), t0)).toBe(false)
  })

  it("the mail names the role, the link and the expiry", () => {
    const mail = compose(invite, "https://podium.example.com/?invite_id=x")
    expect(mail.to).toBe("a@example.com")
    expect(mail.text).toContain("as admin")
    expect(mail.text).toContain("https://podium.example.com/?invite_id=x")
    expect(mail.text).toContain("2026-11-28T10:00:00.000Z")
  })
})
