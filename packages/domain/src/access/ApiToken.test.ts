import { DateTime, Option, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { TokenId } from "../shared/index.ts"
import { UserId } from "../shared/index.ts"
import { WorkspaceId } from "../shared/index.ts"
import { amend, budgetWindowEnd, budgetWindowStart, expiryFor, issue, shouldRecordUse, statusAt } from "./ApiToken.ts"
import { Scopes } from "./Scope.ts"

const now = DateTime.makeUnsafe("2026-11-18T15:30:00.000Z") // a Wednesday

describe("token expiry and status", () => {
  it("maps each expires_in to its lifetime", () => {
    expect(Option.isNone(expiryFor("none", now))).toBe(true)
    expect(DateTime.formatIso(Option.getOrThrow(expiryFor("1h", now)))).toBe("2026-11-18T16:30:00.000Z")
    expect(DateTime.formatIso(Option.getOrThrow(expiryFor("30d", now)))).toBe("2026-12-18T15:30:00.000Z")
    expect(DateTime.formatIso(Option.getOrThrow(expiryFor("1y", now)))).toBe("2027-11-18T15:30:00.000Z")
  })

  it("revoked wins over expired, and expiry is inclusive of its instant", () => {
    const expiresAt = DateTime.add(now, { minutes: 1 })
    expect(statusAt({ revoked_at: null, expires_at: expiresAt }, now)).toBe("active")
    expect(statusAt({ revoked_at: null, expires_at: expiresAt }, expiresAt)).toBe("expired")
    expect(statusAt({ revoked_at: now, expires_at: expiresAt }, DateTime.add(now, { days: 1 }))).toBe("revoked")
    expect(statusAt({ revoked_at: null, expires_at: null }, DateTime.add(now, { days: 9999 }))).toBe("active")
  })
})

describe("issuing a token", () => {
  const issued = {
    id: TokenId.make("00000000-0000-4000-8000-000000000001"),
    workspaceId: WorkspaceId.make("00000000-0000-4000-8000-000000000002"),
    displayPrefix: "pod_abcd",
    createdBy: UserId.make("00000000-0000-4000-8000-000000000003"),
    now
  }

  it("omitted fields mean every scope, no expiry and no budget", () => {
    const token = issue({ name: "ci" }, issued)
    expect(token).toMatchObject({
      id: issued.id,
      workspace_id: issued.workspaceId,
      name: "ci",
      display_prefix: "pod_abcd",
      scopes: Scopes,
      expires_at: null,
      budget_limit: null,
      budget_reset_interval: null,
      created_by: issued.createdBy,
      created_at: now,
      last_used_at: null,
      revoked_at: null
    })
    expect(statusAt(token, now)).toBe("active")
  })

  it("keeps what the request names, duplicate scopes folded, expiry counted from now", () => {
    const token = issue({
      name: "reader",
      scopes: ["models:read", "leaderboards:read", "models:read"],
      expires_in: "1d",
      budget_limit: 0,
      budget_reset_interval: "weekly"
    }, issued)
    expect([token.scopes, token.expires_at, token.budget_limit, token.budget_reset_interval])
      .toEqual([["models:read", "leaderboards:read"], DateTime.add(now, { days: 1 }), 0, "weekly"])
  })
})

describe("changing a token", () => {
  const token = issue({ name: "ci", scopes: ["models:read"], budget_limit: 5, budget_reset_interval: "daily" }, {
    id: TokenId.make("00000000-0000-4000-8000-000000000001"),
    workspaceId: WorkspaceId.make("00000000-0000-4000-8000-000000000002"),
    displayPrefix: "pod_abcd",
    createdBy: null,
    now
  })
  const changed = (change: Parameters<typeof amend>[1]) => Result.getOrThrow(amend(token, change, now))
  const refused = (change: Parameters<typeof amend>[1]) => {
    const result = amend(token, change, now)
    if (Result.isSuccess(result)) throw new Error("expected a refusal")
    return result.failure.path
  }

  it("changes only the fields given, keeps scopes, and moves no spend when the window stays", () => {
    const expiry = DateTime.add(now, { days: 2 })
    const { spendMove, token: next } = changed({ name: "renamed", expires_at: expiry, budget_limit: 1 })
    expect([next.name, next.expires_at, next.budget_limit, next.budget_reset_interval, next.scopes])
      .toEqual(["renamed", expiry, 1, "daily", ["models:read"]])
    expect(spendMove).toBeNull()
    expect(changed({}).token).toEqual(token)
  })

  it("a new reset interval moves the spend from the old window to the new one containing now", () => {
    // Wednesday 2026-11-18: the day starts that midnight, the week on Monday the 16th, the month on the 1st
    const iso = (change: Parameters<typeof amend>[1]) => {
      const move = changed(change).spendMove
      return move === null ? null : [DateTime.formatIso(move.from), DateTime.formatIso(move.to)]
    }
    expect(iso({ budget_reset_interval: "weekly" })).toEqual(["2026-11-18T00:00:00.000Z", "2026-11-16T00:00:00.000Z"])
    expect(iso({ budget_reset_interval: "monthly" })).toEqual(["2026-11-18T00:00:00.000Z", "2026-11-01T00:00:00.000Z"])
    expect(iso({ budget_reset_interval: null })).toEqual(["2026-11-18T00:00:00.000Z", "1970-01-01T00:00:00.000Z"])
    expect(iso({ budget_reset_interval: "daily" })).toBeNull()
  })

  it("refuses an expiry not in the future and a reset interval without a limit", () => {
    expect(refused({ expires_at: now })).toEqual(["expires_at"])
    expect(refused({ expires_at: DateTime.subtract(now, { seconds: 1 }) })).toEqual(["expires_at"])
    expect(refused({ budget_limit: null })).toEqual(["budget_limit"])
    expect(refused({ budget_limit: null, budget_reset_interval: "weekly" })).toEqual(["budget_reset_interval"])
    expect(changed({ budget_limit: null, budget_reset_interval: null }).token.budget_limit).toBeNull()
    expect(changed({ expires_at: null }).token.expires_at).toBeNull()
  })
})

describe("budget windows", () => {
  it("start at UTC midnight, Monday, and the first of the month", () => {
    expect(DateTime.formatIso(budgetWindowStart("daily", now))).toBe("2026-11-18T00:00:00.000Z")
    expect(DateTime.formatIso(budgetWindowStart("weekly", now))).toBe("2026-11-16T00:00:00.000Z")
    expect(DateTime.formatIso(budgetWindowStart("monthly", now))).toBe("2026-11-01T00:00:00.000Z")
    expect(DateTime.formatIso(budgetWindowEnd("monthly", now))).toBe("2026-12-01T00:00:00.000Z")
    const sunday = DateTime.makeUnsafe("2026-11-22T23:59:59.999Z")
    expect(DateTime.formatIso(budgetWindowStart("weekly", sunday))).toBe("2026-11-16T00:00:00.000Z")
  })

  it("property: every instant lies in [start, end) of its window, and windows are whole days starting Monday", () => {
    const instant = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) }).map((ms) => DateTime.makeUnsafe(ms))
    fc.assert(fc.property(instant, fc.constantFrom("daily", "weekly", "monthly" as const), (t, interval) => {
      const start = budgetWindowStart(interval, t)
      const end = budgetWindowEnd(interval, t)
      expect(DateTime.toEpochMillis(start)).toBeLessThanOrEqual(DateTime.toEpochMillis(t))
      expect(DateTime.toEpochMillis(t)).toBeLessThan(DateTime.toEpochMillis(end))
      expect(DateTime.toEpochMillis(start) % 86_400_000).toBe(0)
      if (interval === "weekly") expect(DateTime.getPartUtc(start, "weekDay")).toBe(1)
      if (interval === "monthly") expect(DateTime.getPartUtc(start, "day")).toBe(1)
      expect(DateTime.toEpochMillis(budgetWindowStart(interval, end))).toBe(DateTime.toEpochMillis(end))
    }))
  })
})

describe("recording use", () => {
  it("writes when never used or a minute has passed, not in between", () => {
    expect(shouldRecordUse(null, now)).toBe(true)
    expect(shouldRecordUse(DateTime.subtract(now, { seconds: 59 }), now)).toBe(false)
    expect(shouldRecordUse(DateTime.subtract(now, { seconds: 60 }), now)).toBe(true)
  })
})
