import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { LeaderboardId } from "@podium/domain/leaderboards"
import { RunSource } from "@podium/domain/runs"
import { DatasetMissing, LeaderboardArchived, NotFound, NotRunnable, RunEnded, RunInProgress } from "../api/Errors.ts"
import { ApiTokenAuth, requiresScope } from "../api/Security.ts"
import { PageQuery } from "../leaderboards/LeaderboardsApi.ts"
import { RunView } from "../api/RunView.ts"

export const StartRunRequest = Schema.Struct({
  model_ids: Schema.optionalKey(Schema.Array(Schema.String.check(Schema.isUUID())).check(Schema.isMaxLength(100))),
  run_source: Schema.optionalKey(RunSource),
  improve_dataset: Schema.optionalKey(Schema.Boolean)
})

const ResultCell = Schema.Struct({
  leaderboard_model_id: Schema.String,
  output: Schema.NullOr(Schema.String),
  verdict: Schema.NullOr(Schema.Literals(["correct", "incorrect"])),
  reason: Schema.NullOr(Schema.String).annotate({ description: "The judge's reason" }),
  error: Schema.NullOr(Schema.String),
  latency_ms: Schema.NullOr(Schema.Number),
  cost_usd: Schema.NullOr(Schema.Number)
}).annotate({ identifier: "RunResultCell" })

const ResultRow = Schema.Struct({
  index: Schema.Int,
  input: Schema.String,
  reference: Schema.NullOr(Schema.String),
  results: Schema.Array(ResultCell)
}).annotate({ identifier: "RunResultRow" })

const params = { leaderboard_id: LeaderboardId }
const runParams = { leaderboard_id: LeaderboardId, run_id: Schema.String.check(Schema.isUUID()) }
const run = "leaderboards:run" as const
const read = "leaderboards:read" as const

export class RunsApi extends HttpApiGroup.make("runs")
  .add(
    HttpApiEndpoint.post("start", "/api/leaderboards/:leaderboard_id/run", {
      params,
      payload: Schema.optional(StartRunRequest),
      success: Schema.Struct({ run: RunView }).pipe(HttpApiSchema.status(202)),
      error: [NotFound, LeaderboardArchived, NotRunnable, DatasetMissing, RunInProgress]
    }).annotateMerge(requiresScope(run)).annotateMerge(OpenApi.annotations({
      summary: "Run the leaderboard",
      description: "Asks every candidate (or those in `model_ids`) every row of the dataset (a GET dataset is fetched " +
        "when the run starts; a PUSH dataset's latest version is used) and scores the answers (exact or judge), " +
        "in the background: 202 with the queued run. One run at a time per leaderboard (409 `run_in_progress`); " +
        "the leaderboard's status is `running` meanwhile. 409 `dataset_missing` without a usable dataset, " +
        "`not_runnable` for human leaderboards, judge leaderboards without a judge, or no candidates."
    })),
    HttpApiEndpoint.get("list", "/api/leaderboards/:leaderboard_id/runs", {
      params,
      query: PageQuery,
      success: Schema.Struct({ runs: Schema.Array(RunView), next_offset: Schema.NullOr(Schema.Int) }),
      error: NotFound
    }).annotateMerge(requiresScope(read)).annotate(OpenApi.Summary, "The leaderboard's runs, newest first"),
    HttpApiEndpoint.get("get", "/api/leaderboards/:leaderboard_id/runs/:run_id", {
      params: runParams,
      success: Schema.Struct({ run: RunView }),
      error: NotFound
    }).annotateMerge(requiresScope(read)).annotate(OpenApi.Summary, "One run, with its progress while it runs"),
    HttpApiEndpoint.get("results", "/api/leaderboards/:leaderboard_id/runs/:run_id/results", {
      params: runParams,
      query: PageQuery,
      success: Schema.Struct({ run_id: Schema.String, rows: Schema.Array(ResultRow), next_offset: Schema.NullOr(Schema.Int) }),
      error: NotFound
    }).annotateMerge(requiresScope(read)).annotateMerge(OpenApi.annotations({
      summary: "The run's rows",
      description: "Each row asked: input, reference, and every candidate's answer so far with its verdict, the " +
        "judge's reason, error, latency and cost. Paginated in row order."
    })),
    HttpApiEndpoint.post("cancel", "/api/leaderboards/:leaderboard_id/runs/:run_id/cancel", {
      params: runParams,
      success: Schema.Struct({ run: RunView }),
      error: [NotFound, RunEnded]
    }).annotateMerge(requiresScope(run)).annotateMerge(OpenApi.annotations({
      summary: "Cancel a run",
      description: "The run stops asking (calls in flight finish) and the leaderboard gets its status back; its " +
        "answers so far stay in its results. 409 `run_ended` when it had ended."
    }))
  )
  .middleware(ApiTokenAuth)
{}
