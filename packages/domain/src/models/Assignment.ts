import { Result } from "effect"
import { minimumDatasetRows } from "../integrations/index.ts"
import type { Leaderboard } from "../leaderboards/index.ts"
import { AssignmentRejected } from "./ModelErrors.ts"

/** What is known of a leaderboard's dataset when a model is assigned it. */
export interface DatasetFacts {
  /** PUSH: rows of the latest consolidated version (0 when none). */
  readonly consolidatedRows: number
  /** GET from the hub: the rows the hub reports (null: not a hub dataset, or unknown). */
  readonly hubRows: number | null
}

/**
 * A model learns from the leaderboards assigned to it, so each must have data to learn from: a PUSH
 * dataset with 100 consolidated rows, or a hub dataset of 100 rows. A running leaderboard is not
 * assigned (the repository checks that again under a lock, against a run starting meanwhile).
 */
export const assignable = (
  leaderboard: Pick<Leaderboard, "id" | "status" | "challenge">,
  facts: DatasetFacts
): Result.Result<void, AssignmentRejected> => {
  const leaderboard_id = leaderboard.id
  if (leaderboard.status === "running") return Result.fail(runningRejection(leaderboard_id))
  const rows = leaderboard.challenge.dataset_type === "PUSH" ? facts.consolidatedRows : facts.hubRows ?? 0
  if (rows >= minimumDatasetRows) return Result.void
  const what = leaderboard.challenge.dataset_type === "PUSH"
    ? `its PUSH dataset has ${rows} consolidated rows`
    : facts.hubRows === null
    ? "its dataset is not a hub dataset with a known row count"
    : `its hub dataset has ${rows} rows`
  return Result.fail(new AssignmentRejected({
    leaderboard_id,
    reason: "min_rows",
    message: `Leaderboard ${leaderboard_id} cannot be assigned: ${what}; a model needs a PUSH dataset with at least ` +
      `${minimumDatasetRows} consolidated rows or a hub dataset with at least ${minimumDatasetRows} rows`
  }))
}

export const runningRejection = (leaderboard_id: string) =>
  new AssignmentRejected({
    leaderboard_id,
    reason: "running",
    message: `Leaderboard ${leaderboard_id} is running: assign it once its run has ended`
  })
