import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { StatsBucket, StatsWindow } from "@podium/domain/inference"
import { LeaderboardId } from "@podium/domain/leaderboards"
import { ModelId } from "@podium/domain/models"
import { NotFound } from "../api/Errors.ts"
import { Timestamp } from "../api/Schemas.ts"
import { ApiTokenAuth, requiresScope } from "../api/Security.ts"

const StatsQuery = {
  window: Schema.optionalKey(StatsWindow.annotate({ description: "The last 24 hours, 7 days or 30 days (default 24h)" })),
  bucket: Schema.optionalKey(StatsBucket.annotate({
    description: "hour or day (UTC): 24h takes hour, 7d day (default) or hour, 30d day; another pairing is 400"
  }))
}

export const UsageBucket = Schema.Struct({
  start: Timestamp.annotate({ description: "The bucket's start: a whole UTC hour, or a UTC midnight" }),
  calls: Schema.Int.annotate({ description: "Calls made in the bucket, whatever their outcome" }),
  errors: Schema.Int.annotate({ description: "Of those, calls that failed (status `error`; a stream its caller left is not one)" }),
  spend_usd: Schema.String.annotate({
    description: "What the calls cost, exact decimal USD as a string (e.g. \"0.0123\"; calls without a price count 0)"
  }),
  latency_p50_ms: Schema.NullOr(Schema.Number).annotate({
    description: "Median latency in ms, within 2% of the exact value; null when no call in the bucket was timed"
  }),
  latency_p95_ms: Schema.NullOr(Schema.Number).annotate({
    description: "95th percentile latency in ms, within 2% of the exact value; null when no call in the bucket was timed"
  })
}).annotate({ identifier: "UsageBucket" })

const seriesFields = {
  window: StatsWindow,
  bucket: StatsBucket,
  from: Timestamp.annotate({ description: "The first bucket's start" }),
  to: Timestamp.annotate({ description: "When the series was read: the last bucket is still filling" }),
  buckets: Schema.Array(UsageBucket).annotate({
    description: "Every bucket of the window, oldest first (24, 168, 7 or 30), buckets without calls as zeros"
  })
}

export const LeaderboardStats = Schema.Struct({ leaderboard_id: LeaderboardId, ...seriesFields })
  .annotate({ identifier: "LeaderboardStats" })
export const ModelStats = Schema.Struct({ model_id: ModelId, ...seriesFields }).annotate({ identifier: "ModelStats" })

const howRead = "Read from hourly rollups kept as calls are recorded (one aggregate query per series, however many " +
  "calls it covers), so a call shows within a moment of being traced. Latency percentiles are estimated from 2%-wide " +
  "latency bins: within 2% of percentile_cont's value."

/** Dashboards: calls, errors, spend and latency over time, per leaderboard and per model. */
export class StatsApi extends HttpApiGroup.make("stats")
  .add(
    HttpApiEndpoint.get("leaderboard", "/api/leaderboards/:leaderboard_id/stats", {
      params: { leaderboard_id: LeaderboardId },
      query: StatsQuery,
      success: LeaderboardStats,
      error: NotFound
    }).annotateMerge(requiresScope("leaderboards:read")).annotateMerge(OpenApi.annotations({
      summary: "A leaderboard's calls, errors, spend and latency over time",
      description: "The leaderboard's production inference (its traces of source `inference`: calls through the " +
        "leaderboard, and through a model on it) per hour or day of the window. " + howRead
    })),
    HttpApiEndpoint.get("model", "/api/models/:model_id/stats", {
      params: { model_id: ModelId },
      query: StatsQuery,
      success: ModelStats,
      error: NotFound
    }).annotateMerge(requiresScope("models:read")).annotateMerge(OpenApi.annotations({
      summary: "A model's calls, errors, spend and latency over time",
      description: "The model's inference (its inference logs: every call through the model, whichever version " +
        "answered) per hour or day of the window. " + howRead
    }))
  )
  .middleware(ApiTokenAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Dashboards",
    description: "Calls, errors, spend and latency p50/p95 of a leaderboard or a model over the last 24 hours, 7 days " +
      "or 30 days, per hour or day"
  }))
{}
