import { DateTime, Option, Result } from "effect"
import { describe, expect, it } from "vitest"
import { nextOccurrence, runScheduleOf, scheduleOf, schedulesRuns } from "./Schedule.ts"

const now = DateTime.makeUnsafe("2026-11-23T08:10:00.000Z") // a Monday, 09:10 in Paris

describe("scheduleOf", () => {
  it("computes the next occurrence in the schedule's zone", () => {
    expect(Result.getOrThrow(scheduleOf({ cron: "30 9 * * 1-5", timezone: "Europe/Paris" }, now))).toEqual({
      cron: "30 9 * * 1-5",
      timezone: "Europe/Paris",
      next_run_at: "2026-11-23T08:30:00.000Z"
    })
    expect(Result.getOrThrow(scheduleOf({ cron: " 0 0 * * * " }, now))).toMatchObject({
      cron: "0 0 * * *",
      timezone: "UTC",
      next_run_at: "2026-11-24T00:00:00.000Z"
    })
  })

  it("recomputes a next_run_at that was sent, and {} is no schedule", () => {
    expect(Result.getOrThrow(scheduleOf({ cron: "0 * * * *", next_run_at: "1999-01-01T00:00:00Z" }, now))).toMatchObject({
      next_run_at: "2026-11-23T09:00:00.000Z"
    })
    expect(Result.getOrThrow(scheduleOf({}, now))).toEqual({})
  })

  it.each([
    [{ cron: "every day" }, "cron"],
    [{ cron: "* * * *" }, "cron"],
    [{ cron: "60 * * * *" }, "cron"],
    [{ cron: "0 0 31 2 *" }, "cron"],
    [{ cron: 5 }, "cron"],
    [{ timezone: "UTC" }, "cron"],
    [{ cron: "* * * * *", timezone: "Nowhere/City" }, "timezone"],
    [{ cron: "* * * * *", timezone: 1 }, "timezone"]
  ])("refuses %j at schedule.%s", (input, field) => {
    const result = scheduleOf(input, now)
    expect(Result.isFailure(result) && result.failure.path).toEqual(["schedule", field])
  })

  it("says what is wrong", () => {
    const message = (input: Record<string, unknown>) => {
      const result = scheduleOf(input, now)
      return Result.isFailure(result) ? result.failure.message : "accepted"
    }
    const fields = "cron must be a cron expression of 5 fields (or 6, seconds first)"
    const zone = "timezone must be an IANA time zone name, e.g. Europe/Paris"
    expect([{ timezone: "UTC" }, { cron: null, timezone: "UTC" }].map(message)).toEqual(["A schedule needs a cron", "A schedule needs a cron"])
    // a whole expression of 5 or 6 fields, not the tail or the head of a longer one
    expect(["0 0 * * * * *", "0 0 * * * * x", "x 0 0 * * * *"].map((cron) => message({ cron }))).toEqual([fields, fields, fields])
    expect(message({ cron: "60 * * * *" })).toBe("cron: Expected a value between 0 and 59")
    expect(message({ cron: "0 0 31 2 *" })).toBe("cron never fires")
    // a zone is a string naming one, not anything that prints as one
    expect([{ cron: "0 0 * * *", timezone: ["UTC"] }, { cron: "0 0 * * *", timezone: "Nowhere/City" }].map(message)).toEqual([zone, zone])
  })

  it("null is no cron and no zone: {} without either, UTC for the zone", () => {
    expect([{ cron: null }, { timezone: null }, { cron: null, timezone: null }].map((input) => Result.getOrThrow(scheduleOf(input, now))))
      .toEqual([{}, {}, {}])
    expect(Result.getOrThrow(scheduleOf({ cron: "0 0 * * *", timezone: null }, now))).toMatchObject({ timezone: "UTC" })
  })

  it("fields may be separated by any run of spaces", () => {
    expect(Result.getOrThrow(scheduleOf({ cron: "0  0\t* * *" }, now))).toMatchObject({ cron: "0  0\t* * *", next_run_at: "2026-11-24T00:00:00.000Z" })
  })
})

describe("the next occurrence and who runs", () => {
  it("is strictly after the given time", () => {
    const schedule = { cron: "10 8 * * *", timezone: "UTC" }
    expect(DateTime.formatIso(nextOccurrence(schedule, now))).toBe("2026-11-24T08:10:00.000Z")
  })

  it("only a complete stored schedule counts", () => {
    expect(Option.isNone(runScheduleOf({ cron: "* * * * *" }))).toBe(true)
    const stored = { cron: "* * * * *", timezone: "UTC", next_run_at: "2026-11-23T08:11:00.000Z" }
    expect(runScheduleOf(stored)).toEqual(Option.some(stored))
    for (const field of ["cron", "timezone", "next_run_at"]) {
      expect(Option.isNone(runScheduleOf({ ...stored, [field]: undefined }))).toBe(true)
      expect(Option.isNone(runScheduleOf({ ...stored, [field]: 1 }))).toBe(true)
    }
  })

  it("starts no run while paused or archived, nor after end_date", () => {
    const at = (status: string, end_date: string | null) => schedulesRuns({ status, challenge: { end_date } }, now)
    expect(at("active", null)).toBe(true)
    expect(at("running", null)).toBe(true)
    expect(at("paused", null)).toBe(false)
    expect(at("archived", null)).toBe(false)
    expect(at("active", "2026-11-23T08:09:59Z")).toBe(false)
    expect(at("active", "2026-11-23T08:10:01Z")).toBe(true)
  })
})
