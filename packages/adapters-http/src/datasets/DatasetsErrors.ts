import { Effect, Schema } from "effect"
import type * as Datasets from "@podium/domain/datasets"
import { apiError, ErrorClass, type ErrorAnswers, PayloadTooLarge } from "../api/Errors.ts"

// The HTTP errors of pushed rows and auto-labels.

export class LeaderboardPaused extends ErrorClass<LeaderboardPaused>()("LeaderboardPaused", 409, "leaderboard_paused") {}
export class CollectionEnded extends ErrorClass<CollectionEnded>()(
  "CollectionEnded",
  409,
  "collection_ended",
  Schema.Struct({ end_date: Schema.String })
) {}
export class NotPushDataset extends ErrorClass<NotPushDataset>()("NotPushDataset", 409, "not_push_dataset") {}
export class NoLabeller extends ErrorClass<NoLabeller>()("NoLabeller", 409, "no_labeller") {}
export class EventLimitExceeded extends ErrorClass<EventLimitExceeded>()(
  "EventLimitExceeded",
  429,
  "event_limit_exceeded",
  Schema.Struct({ retry_after_seconds: Schema.Finite, limits: Schema.Unknown })
) {}

/** Datasets' domain errors as contract errors; `DatasetFileError` is a fetched file's, which a run records, not a handler. */
export const datasetsErrors = {
  PushTooLarge: (e) => Effect.fail(apiError(PayloadTooLarge, e.message)),
  NotPushDataset: () =>
    Effect.fail(apiError(NotPushDataset, "Rows are pushed only to leaderboards whose dataset_type is PUSH")),
  LeaderboardPaused: () =>
    Effect.fail(apiError(LeaderboardPaused, "The leaderboard is paused: set its status to active to push rows")),
  CollectionEnded: (e) =>
    Effect.fail(apiError(CollectionEnded, `The leaderboard stopped collecting rows at its end_date ${e.end_date}`, {
      end_date: e.end_date
    })),
  EventLimitExceeded: (e) =>
    Effect.fail(apiError(EventLimitExceeded, "Every row is over the leaderboard's daily or monthly event limit", {
      retry_after_seconds: e.retry_after_seconds,
      limits: e.limits
    })),
  NoLabeller: () =>
    Effect.fail(apiError(NoLabeller,
      "Auto-labels need a labeller: set judge_provider and judge_model, or choose a candidate that serves"))
} satisfies ErrorAnswers<typeof Datasets, "DatasetFileError">
