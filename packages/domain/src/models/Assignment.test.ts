import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { challengeOf, LeaderboardId, type LeaderboardStatus } from "../leaderboards/index.ts"
import { uuid } from "../testing/index.ts"
import { assignable, type DatasetFacts } from "./Assignment.ts"

const leaderboard = (dataset_type: "PUSH" | "GET", status: LeaderboardStatus = "active") => ({
  id: LeaderboardId.make(uuid(1)),
  status,
  challenge: challengeOf({ dataset_type })
})

const facts = (consolidatedRows: number, hubRows: number | null): DatasetFacts => ({ consolidatedRows, hubRows })
const refusal = (result: Result.Result<void, unknown>) => (Result.isFailure(result) ? result.failure : undefined)

describe("assignable", () => {
  it("takes a PUSH dataset from 100 consolidated rows, whatever the hub says", () => {
    expect(Result.isSuccess(assignable(leaderboard("PUSH"), facts(100, null)))).toBe(true)
    expect(Result.isSuccess(assignable(leaderboard("PUSH", "paused"), facts(1000, 0)))).toBe(true)
    expect(refusal(assignable(leaderboard("PUSH"), facts(99, 1000)))).toMatchObject({
      _tag: "AssignmentRejected",
      leaderboard_id: uuid(1),
      reason: "min_rows",
      message: `Leaderboard ${uuid(1)} cannot be assigned: its PUSH dataset has 99 consolidated rows; a model needs a PUSH dataset ` +
        "with at least 100 consolidated rows or a hub dataset with at least 100 rows"
    })
  })

  it("takes a hub dataset from 100 reported rows, whatever is consolidated", () => {
    expect(Result.isSuccess(assignable(leaderboard("GET"), facts(0, 100)))).toBe(true)
    expect(refusal(assignable(leaderboard("GET"), facts(1000, 99)))).toMatchObject({
      reason: "min_rows",
      message: expect.stringContaining("cannot be assigned: its hub dataset has 99 rows;")
    })
    expect(refusal(assignable(leaderboard("GET"), facts(1000, null)))).toMatchObject({
      reason: "min_rows",
      message: expect.stringContaining("cannot be assigned: its dataset is not a hub dataset with a known row count;")
    })
  })

  it("refuses a running leaderboard, however much data it has", () => {
    expect(refusal(assignable(leaderboard("PUSH", "running"), facts(1000, 1000)))).toMatchObject({
      _tag: "AssignmentRejected",
      leaderboard_id: uuid(1),
      reason: "running",
      message: `Leaderboard ${uuid(1)} is running: assign it once its run has ended`
    })
  })
})
