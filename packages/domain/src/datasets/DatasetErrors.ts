import { Schema } from "effect"

/** Every row of a push was over the leaderboard's daily or monthly event limit. */
export class EventLimitExceeded extends Schema.TaggedError<EventLimitExceeded>()("EventLimitExceeded", {
  leaderboard_id: Schema.String,
  retry_after_seconds: Schema.Int,
  limits: Schema.Unknown
}) {}

/** The leaderboard's `end_date` has passed: it collects no more rows. */
export class CollectionEnded extends Schema.TaggedError<CollectionEnded>()("CollectionEnded", {
  leaderboard_id: Schema.String,
  end_date: Schema.String
}) {}

/** A paused leaderboard takes no pushes until it is active again. */
export class LeaderboardPaused extends Schema.TaggedError<LeaderboardPaused>()("LeaderboardPaused", {
  leaderboard_id: Schema.String
}) {}

/** Dataset rows are pushed only to leaderboards whose `dataset_type` is PUSH. */
export class NotPushDataset extends Schema.TaggedError<NotPushDataset>()("NotPushDataset", {
  leaderboard_id: Schema.String
}) {}

/** More rows or bytes in one push than a request may carry. */
export class PushTooLarge extends Schema.TaggedError<PushTooLarge>()("PushTooLarge", {
  message: Schema.String
}) {}

/** Auto-labels need a labeller: the judge model, else a candidate that serves. */
export class NoLabeller extends Schema.TaggedError<NoLabeller>()("NoLabeller", {
  leaderboard_id: Schema.String
}) {}
