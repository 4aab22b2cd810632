import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { LeaderboardId } from "@podium/domain/leaderboards"
import { TraceSource } from "@podium/domain/inference"
import { NotFound } from "../api/Errors.ts"
import { PageQuery } from "../leaderboards/LeaderboardsApi.ts"
import { ApiTokenAuth, requiresScope } from "../api/Security.ts"

export const TraceFormat = Schema.Literals(["json", "jsonl", "ndjson"])

const TraceRow = Schema.Record(Schema.String, Schema.Unknown).annotate({
  identifier: "Trace",
  description: "id, leaderboard_id, leaderboard_model_id, source, run_id, input, messages, output, status " +
    "(success|error|cancelled: a streamed call whose caller went away), error, latency_ms, usage, cost_usd, token_id, created_at"
})

export const TraceList = Schema.Struct({
  leaderboard_id: LeaderboardId,
  traces_url: Schema.String.annotate({ description: "This export as JSONL" }),
  count: Schema.Int.annotate({ description: "Rows in this response" }),
  limit: Schema.Int.annotate({ description: "Most rows one response returns" }),
  offset: Schema.Int,
  batch_count: Schema.Int.annotate({ description: "Database round trips made (up to `batch_limit` rows each)" }),
  scanned_rows: Schema.Int.annotate({ description: "Rows read from storage; filters run in the database, so equal to count" }),
  next_offset: Schema.NullOr(Schema.Int).annotate({ description: "offset + count while rows remain, else null" }),
  next_cursor: Schema.NullOr(Schema.String).annotate({
    description: "Pass as `cursor` for the next page (the last row's id) while rows remain, else null"
  }),
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
        cursor: Schema.optionalKey(Schema.String.check(Schema.isUUID())),
        batch_limit: Schema.optionalKey(
          Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 100 }))
        )
      },
      success: [
        TraceList,
        Schema.String.pipe(HttpApiSchema.asText({ contentType: "application/jsonl" }))
      ],
      error: NotFound
    }).annotateMerge(requiresScope("leaderboards:read")).annotateMerge(OpenApi.annotations({
      summary: "Export a leaderboard's traces",
      description: "Traces in creation order, filtered by `source` and `run_id`. Every row accepted by a dataset " +
        "push is a trace of source `dataset` (its input or messages, its reference as output, its latency_ms and " +
        "cost_usd), duplicates dropped at consolidation included. At most `limit` rows (1–1000, " +
        "default 100) after `cursor` (a trace id, the previous page's `next_cursor`) and `offset`, " +
        "`batch_limit` rows (1–100, default 25) at a time. Follow `next_cursor` for a full export: " +
        "each page is an index seek, however deep. `format` jsonl (default) or ndjson streams one JSON object " +
        "per line, with the next page's cursor in the `X-Next-Cursor` header (absent on the last page): one " +
        "streamed statement per page, sent in chunks of `batch_limit` lines (a line's JSON may differ from the " +
        "json format's in spacing and number notation, never in value); json answers a TraceList with " +
        "`next_cursor` and `next_offset` (null on the last page), read `batch_limit` rows per database round trip."
    }))
  )
  .middleware(ApiTokenAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Traces",
    description: "Every call and row a leaderboard recorded (inference, runs, dataset rows, human evaluation, " +
      "fine-tuning), exported by cursor."
  }))
{}
