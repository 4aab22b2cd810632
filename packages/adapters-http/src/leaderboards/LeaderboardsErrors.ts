import { Effect } from "effect"
import type * as Leaderboards from "@podium/domain/leaderboards"
import { apiError, ErrorClass, type ErrorAnswers } from "../api/Errors.ts"

// The HTTP errors of leaderboards.

export class LeaderboardArchived extends ErrorClass<LeaderboardArchived>()("LeaderboardArchived", 409, "leaderboard_archived") {}

/** Leaderboards' domain errors as contract errors. */
export const leaderboardsErrors = {
  LeaderboardArchived: () =>
    Effect.fail(apiError(LeaderboardArchived, "The leaderboard is archived: set its status to active first"))
} satisfies ErrorAnswers<typeof Leaderboards>
