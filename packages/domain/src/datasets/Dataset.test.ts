import { DateTime, Duration, Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  checkCollecting,
  consolidationDue,
  consolidationRules,
  consolidationView,
  type DatasetState,
  emptyState,
  nextTimedConsolidation
} from "./Dataset.ts"
import { type ChallengeInput, challengeOf, LeaderboardId, type LeaderboardStatus } from "../leaderboards/index.ts"
import { uuid } from "../testing/index.ts"

const t0 = DateTime.makeUnsafe("2026-11-22T10:00:00.000Z")
const later = (hours: number, millis = 0) => DateTime.addDuration(t0, Duration.millis(hours * 3_600_000 + millis))

const triggers = (every_events: number | null, every_hours: number | null) => ({
  consolidate_every_events: every_events,
  consolidate_every_hours: every_hours
})

/** `pending` rows waiting since `since`, after a consolidation at `last` (if any). */
const waiting = (pending: number, since: DateTime.Utc | null, last: DateTime.Utc | null = null): DatasetState => ({
  ...emptyState,
  pending,
  pending_since: pending === 0 ? null : since,
  last_consolidated_at: last,
  latest_version: last === null ? null : 1
})

describe("consolidationDue", () => {
  it("nothing pending is never due", () => {
    expect(consolidationDue(triggers(1, 1), waiting(0, null, t0), later(100))).toBeNull()
    expect(consolidationDue(triggers(0, 0), emptyState, later(100))).toBeNull()
  })

  it("the events trigger fires once as many rows as it names are pending", () => {
    expect(consolidationDue(triggers(10, null), waiting(9, t0), t0)).toBeNull()
    expect(consolidationDue(triggers(10, null), waiting(10, t0), t0)).toBe("events")
    expect(consolidationDue(triggers(10, null), waiting(25, t0), t0)).toBe("events")
    expect(consolidationDue(triggers(null, null), waiting(10 ** 6, t0), later(10 ** 4))).toBeNull()
    expect(consolidationDue(triggers(0, null), waiting(5, t0), t0)).toBeNull()
  })

  it("the hours trigger counts from the last consolidation, else from the oldest pending row", () => {
    // never consolidated: from the oldest pending row
    expect(consolidationDue(triggers(null, 2), waiting(1, t0), later(2, -1))).toBeNull()
    expect(consolidationDue(triggers(null, 2), waiting(1, t0), later(2))).toBe("hours")
    // consolidated at t0, rows since t0 + 1h: due at t0 + 2h all the same
    expect(consolidationDue(triggers(null, 2), waiting(1, later(1), t0), later(2, -1))).toBeNull()
    expect(consolidationDue(triggers(null, 2), waiting(1, later(1), t0), later(2))).toBe("hours")
    // a row arriving long after the last consolidation is due at once
    expect(consolidationDue(triggers(null, 2), waiting(1, later(30), t0), later(30))).toBe("hours")
    expect(consolidationDue(triggers(null, 0), waiting(1, t0), later(1000))).toBeNull()
  })

  it("events win when both triggers have fired", () => {
    expect(consolidationDue(triggers(3, 1), waiting(3, t0), later(5))).toBe("events")
    expect(consolidationDue(triggers(3, 1), waiting(2, t0), later(5))).toBe("hours")
  })

  it("once due, stays due as time passes while the rows wait", () => {
    const trigger = fc.option(fc.integer({ min: 0, max: 48 }), { nil: null })
    fc.assert(fc.property(
      trigger,
      trigger,
      fc.integer({ min: 0, max: 50 }),
      fc.integer({ min: 0, max: 100 * 3_600_000 }),
      fc.integer({ min: 0, max: 100 * 3_600_000 }),
      fc.boolean(),
      (events, hours, pending, sinceMillis, waitMillis, consolidatedBefore) => {
        const state = waiting(pending, later(0, sinceMillis), consolidatedBefore ? t0 : null)
        const now = later(0, sinceMillis)
        const due = consolidationDue(triggers(events, hours), state, now)
        if (pending === 0) expect(due).toBeNull()
        if (due !== null) {
          expect(consolidationDue(triggers(events, hours), state, DateTime.addDuration(now, Duration.millis(waitMillis))))
            .not.toBeNull()
        }
      }
    ))
  })
})

describe("nextTimedConsolidation", () => {
  it("is the hours after the last consolidation, else after the oldest pending row, else none", () => {
    const next = (...args: Parameters<typeof nextTimedConsolidation>) => {
      const at = nextTimedConsolidation(...args)
      return at === null ? null : DateTime.formatIso(at)
    }
    expect(next(triggers(null, 6), waiting(1, later(1), t0))).toBe("2026-11-22T16:00:00.000Z")
    expect(next(triggers(null, 6), waiting(1, later(1)))).toBe("2026-11-22T17:00:00.000Z")
    expect(next(triggers(null, 6), emptyState)).toBeNull()
    expect(next(triggers(100, null), waiting(1, t0))).toBeNull()
    expect(next(triggers(null, 0), waiting(1, t0))).toBeNull()
  })
})

describe("consolidationRules", () => {
  const rules = (dedupe: boolean, auto_limit_size: boolean, max_samples_to_gather: number | null) =>
    consolidationRules({ dedupe, auto_limit_size, max_samples_to_gather })

  it("keeps the newest N only when auto_limit_size is on with a positive max_samples_to_gather", () => {
    expect(rules(true, true, 500)).toEqual({ dedupe: true, newest: 500 })
    expect(rules(false, true, 1)).toEqual({ dedupe: false, newest: 1 })
    expect(rules(false, false, 500)).toEqual({ dedupe: false, newest: null })
    expect(rules(true, true, null)).toEqual({ dedupe: true, newest: null })
    expect(rules(true, true, 0)).toEqual({ dedupe: true, newest: null })
  })
})

describe("consolidationView", () => {
  it("counts down to the events trigger and names the next timed one while rows wait", () => {
    expect(consolidationView(triggers(10, 2), waiting(4, later(1), t0))).toEqual({
      pending_events: 4,
      every_events: 10,
      every_hours: 2,
      events_until_next: 6,
      next_at: "2026-11-22T12:00:00.000Z",
      last_consolidated_at: "2026-11-22T10:00:00.000Z"
    })
    expect(consolidationView(triggers(10, 2), waiting(0, null, t0))).toMatchObject({ events_until_next: 10, next_at: null })
    expect(consolidationView(triggers(null, null), emptyState)).toMatchObject({
      events_until_next: null,
      next_at: null,
      last_consolidated_at: null
    })
  })
})

describe("checkCollecting", () => {
  const now = DateTime.makeUnsafe("2026-11-23T12:00:00.000Z")
  const board = (status: LeaderboardStatus, overrides: ChallengeInput = {}) => ({
    id: LeaderboardId.make(uuid(1)),
    status,
    challenge: challengeOf({ dataset_type: "PUSH", ...overrides })
  })
  const tag = (result: ReturnType<typeof checkCollecting>) => Result.isSuccess(result) ? "ok" : result.failure._tag

  it("takes rows while active (or running), refuses paused, archived, ended and GET datasets", () => {
    expect(tag(checkCollecting(board("active"), now))).toBe("ok")
    expect(tag(checkCollecting(board("running"), now))).toBe("ok")
    expect(tag(checkCollecting(board("paused"), now))).toBe("LeaderboardPaused")
    expect(tag(checkCollecting(board("archived"), now))).toBe("LeaderboardArchived")
    expect(tag(checkCollecting(board("active", { dataset_type: "GET" }), now))).toBe("NotPushDataset")
  })

  it("ends at end_date, to the millisecond", () => {
    expect(tag(checkCollecting(board("active", { end_date: "2026-11-23T12:00:00.001Z" }), now))).toBe("ok")
    expect(tag(checkCollecting(board("active", { end_date: "2026-11-23T12:00:00.000Z" }), now))).toBe("CollectionEnded")
    expect(tag(checkCollecting(board("active", { end_date: "2026-11-22" }), now))).toBe("CollectionEnded")
  })
})
