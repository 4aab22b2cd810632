import { DateTime, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { InviteId, UserId, WorkspaceId } from "../shared/index.ts"
import { accept, create, effectiveStatus, revoke } from "./Invite.ts"

const t0 = DateTime.makeUnsafe("2026-11-21T10:00:00.000Z")
const pending = create({
  id: "0190a000-0000-7000-8000-000000000001" as InviteId,
  workspaceId: "0190a000-0000-7000-8000-000000000002" as WorkspaceId,
  email: "a@example.com",
  role: "member",
  invitedBy: null,
  redirectTo: null,
  now: t0
})

const user = "0190a000-0000-7000-8000-000000000003" as UserId
const at = (hours: number) => DateTime.add(t0, { hours })

describe("invite lifecycle", () => {
  it("expires seven days after creation", () => {
    expect(effectiveStatus(pending, at(7 * 24 - 1))).toBe("pending")
    expect(effectiveStatus(pending, at(7 * 24))).toBe("expired")
  })

  it("accepting records who and when; an accepted invite cannot move again", () => {
    const accepted = Result.getOrThrow(accept(pending, user, at(1)))
    expect(accepted.status).toBe("accepted")
    expect(accepted.accepted_by).toBe(user)
    expect(Result.isFailure(accept(accepted, user, at(2)))).toBe(true)
    expect(Result.isFailure(revoke(accepted, at(2)))).toBe(true)
  })

  it("an overdue invite can be neither accepted nor revoked", () => {
    expect(Result.isFailure(accept(pending, user, at(200)))).toBe(true)
    expect(Result.isFailure(revoke(pending, at(200)))).toBe(true)
  })

  it("property: any sequence of events leaves at most one transition out of pending, never back", () => {
    const event = fc.record({ kind: fc.constantFrom("accept", "revoke"), hours: fc.integer({ min: 0, max: 400 }) })
    fc.assert(fc.property(fc.array(event, { maxLength: 12 }), (events) => {
      let invite = pending
      let transitions = 0
      const sorted = [...events].sort((a, b) => a.hours - b.hours)
      for (const e of sorted) {
        const next = e.kind === "accept" ? accept(invite, user, at(e.hours)) : revoke(invite, at(e.hours))
        if (Result.isSuccess(next)) {
          expect(effectiveStatus(invite, at(e.hours))).toBe("pending")
          expect(e.hours).toBeLessThan(7 * 24)
          invite = next.success
          transitions++
        }
      }
      expect(transitions).toBeLessThanOrEqual(1)
      if (invite.status === "accepted") expect(invite.accepted_at).not.toBeNull()
      else expect(invite.accepted_at).toBeNull()
    }))
  })
})
