import { DateTime, Option, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { UserId } from "../shared/index.ts"
import { WorkspaceId } from "../shared/index.ts"
import { InviteId } from "../shared/index.ts"
import { accept, create, effectiveStatus, expire, type Invite, refresh, revoke, statusOf } from "./Invite.ts"
import type { InviteNotPending } from "./WorkspaceErrors.ts"

const t0 = DateTime.makeUnsafe("2026-11-21T10:00:00.000Z")
const input = {
  id: InviteId.make("0190a000-0000-7000-8000-000000000001"),
  workspaceId: WorkspaceId.make("0190a000-0000-7000-8000-000000000002"),
  email: "a@example.com",
  role: "member" as const,
  invitedBy: null,
  redirectTo: null,
  now: t0
}
const pending = create(input)

const user = UserId.make("0190a000-0000-7000-8000-000000000003")
const at = (hours: number) => DateTime.add(t0, { hours })

describe("invite lifecycle", () => {
  it("stores the email trimmed and in lower case", () => {
    expect(create({ ...input, email: "  Ann@Example.COM\t" }).email).toBe("ann@example.com")
  })

  it("expires seven days after creation", () => {
    expect(effectiveStatus(pending, at(7 * 24 - 1))).toBe("pending")
    expect(effectiveStatus(pending, at(7 * 24))).toBe("expired")
  })

  it("accepting records who and when; an accepted invite cannot move again", () => {
    const accepted = Result.getOrThrow(accept(pending, user, at(1)))
    expect(statusOf(accepted)).toBe("accepted")
    expect(accepted.accepted_by).toBe(user)
    expect(accepted.accepted_at).toEqual(at(1))
    expect(Result.isFailure(accept(accepted, user, at(2)))).toBe(true)
    expect(Result.isFailure(revoke(accepted, at(2)))).toBe(true)
  })

  it("an accepted or revoked invite keeps its status past the pending invite's expiry", () => {
    const late = at(400)
    expect(effectiveStatus(Result.getOrThrow(accept(pending, user, at(1))), late)).toBe("accepted")
    expect(effectiveStatus(Result.getOrThrow(revoke(pending, at(1))), late)).toBe("revoked")
  })

  it("an overdue invite can be neither accepted nor revoked", () => {
    expect(Result.isFailure(accept(pending, user, at(200)))).toBe(true)
    expect(Result.isFailure(revoke(pending, at(200)))).toBe(true)
  })

  it("only a pending invite past its expiry expires", () => {
    expect(Option.isNone(expire(pending, at(7 * 24 - 1)))).toBe(true)
    const expired = Option.getOrThrow(expire(pending, at(7 * 24)))
    expect(statusOf(expired)).toBe("expired")
    expect(Option.isNone(expire(expired, at(400)))).toBe(true)
    expect(Option.isNone(expire(Result.getOrThrow(revoke(pending, at(1))), at(400)))).toBe(true)
  })

  it("a refresh keeps the id, email and creation time, takes the rest and queues the mail again", () => {
    const sent = { ...pending, mail_status: "sent" as const, mail_attempts: 1, mail_sent_at: at(1) }
    const fresh = create({ ...input, id: InviteId.make("0190a000-0000-7000-8000-000000000009"), role: "admin", now: at(2) })
    expect(refresh(sent, fresh)).toEqual({ ...fresh, id: pending.id, created_at: t0 })
  })

  it("property: of any sequence of events the first within the lifetime wins; nothing moves after it", () => {
    const event = fc.record({ kind: fc.constantFrom("accept", "revoke"), hours: fc.integer({ min: 0, max: 400 }) })
    fc.assert(fc.property(fc.array(event, { maxLength: 12 }), (events) => {
      let invite: Invite = pending
      let transitions = 0
      const sorted = [...events].sort((a, b) => a.hours - b.hours)
      for (const e of sorted) {
        const next: Result.Result<Invite, InviteNotPending> = e.kind === "accept" ? accept(invite, user, at(e.hours)) : revoke(invite, at(e.hours))
        if (Result.isSuccess(next)) {
          expect(effectiveStatus(invite, at(e.hours))).toBe("pending")
          expect(e.hours).toBeLessThan(7 * 24)
          invite = next.success
          transitions++
        }
      }
      expect(transitions).toBeLessThanOrEqual(1)
      const first = sorted.find((e) => e.hours < 7 * 24)
      expect(statusOf(invite)).toBe(first === undefined ? "pending" : first.kind === "accept" ? "accepted" : "revoked")
    }))
  })
})
