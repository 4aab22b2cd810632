import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { LeaderboardId } from "@podium/domain/Leaderboard"
import { TraceSource } from "@podium/domain/Trace"
import { BadRequest, NotFound } from "./Errors.ts"
import { PageQuery } from "./LeaderboardsApi.ts"
import { ApiTokenAuth, requiresScope } from "./Security.ts"

export const TraceFormat = Schema.Literals(["json", "jsonl", "ndjson"])

const TraceRow = Schema.Record(Schema.String, Schema.Unknown).annotate({
  identifier: "Trace",
  description: "id, leaderboard_id, leaderboard_model_id, source, run_id, input, messages, output, status " +
    "(success|error), error, latency_ms, usage, cost_usd, token_id, created_at"
})

export const TraceList = Schema.Struct({
  leaderboard_id: LeaderboardId,
  traces_url: Schema.String.annotate({ description: "This export as JSONL" }),
  count: Schema.Int.annotate({ description: "Rows in this response" }),
  limit: Schema.Int,
  offset: Schema.Int,
  batch_count: Schema.Int.annotate({ description: "Batches read (one query of up to `limit` rows each)" }),
  scanned_rows: Schema.Int.annotate({ description: "Rows read from storage; filters run in the database, so equal to count" }),
  next_offset: Schema.NullOr(Schema.Int),
  rows: Schema.Array(TraceRow)
}).annotate({ identifier: "TraceList" })

export class TracesApi extends HttpApiGroup.make("traces")
  .add(
    HttpApiEndpoint.get("export", "/v1/leaderboard/:leaderboard_id/traces", {
      params: { leaderboard_id: LeaderboardId },
      query: {
        ...PageQuery,
        source: Schema.optionalKey(TraceSource),
        run_id: Schema.optionalKey(Schema.String.check(Schema.isUUID())),
        format: Schema.optionalKey(TraceFormat),
        batch_limit: Schema.optionalKey(
          Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 100 }))
        )
      },
      success: [
        TraceList,
        Schema.String.pipe(HttpApiSchema.asText({ contentType: "application/jsonl" }))
      ],
      error: [BadRequest, NotFound]
    }).annotateMerge(requiresScope("leaderboards:read")).annotateMerge(OpenApi.annotations({
      summary: "Export a leaderboard's traces",
      description: "Traces in creation order, filtered by `source` and `run_id`, skipping `offset`. They are read " +
        "in batches of `limit` rows (one query each), at most `batch_limit` batches (default 25) per request, " +
        "so one request returns at most limit × batch_limit rows (100,000). `format` jsonl (default) or ndjson " +
        "streams one JSON object per line in constant memory; json answers a TraceList whose `next_offset` " +
        "continues the export (null when it ended before the batch limit)."
    }))
  )
  .middleware(ApiTokenAuth)
  .annotateMerge(OpenApi.annotations({ title: "Traces" }))
{}
