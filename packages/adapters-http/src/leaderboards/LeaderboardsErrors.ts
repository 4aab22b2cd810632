import { Effect } from "effect"
import type * as Leaderboards from "@podium/domain/leaderboards"
import { apiError, ErrorClass, type ErrorAnswers } from "../api/Errors.ts"

// The HTTP errors of leaderboards.

export class LeaderboardArchived extends ErrorClass<LeaderboardArchived>()("LeaderboardArchived", 409, "leaderboard_archived") {}
export class NoPreviousServing extends ErrorClass<NoPreviousServing>()("NoPreviousServing", 409, "no_previous_serving") {}

/** Leaderboards' domain errors as contract errors. */
export const leaderboardsErrors = {
  LeaderboardArchived: () =>
    Effect.fail(apiError(LeaderboardArchived, "The leaderboard is archived: set its status to active first")),
  NoPreviousServing: (e) => Effect.fail(apiError(NoPreviousServing, e.message))
} satisfies ErrorAnswers<typeof Leaderboards>
