import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { LeaderboardId } from "@podium/domain/leaderboards"
import { RunId } from "@podium/domain/shared"
import { maxSampleSeed, RunSample, RunSource } from "@podium/domain/runs"
import { NotFound } from "../api/Errors.ts"
import { LeaderboardArchived } from "../leaderboards/LeaderboardsErrors.ts"
import { DatasetMissing, NotRunnable, RunEnded, RunInProgress } from "./RunsErrors.ts"
import { ApiTokenAuth, requiresScope } from "../api/Security.ts"
import { PageQuery } from "../leaderboards/LeaderboardsApi.ts"
import { IsoTimestamp } from "../api/Schemas.ts"
import { RunView } from "./RunView.ts"

export const StartRunRequest = Schema.Struct({
  model_ids: Schema.optionalKey(Schema.Array(Schema.String.check(Schema.isUUID())).check(Schema.isMaxLength(100))),
  run_source: Schema.optionalKey(RunSource),
  improve_dataset: Schema.optionalKey(Schema.Boolean),
  sample: Schema.optionalKey(Schema.Struct({
    size: RunSample.fields.size.annotate({ description: "Rows to ask, 1 … 100,000 (all of them when the dataset has fewer)" }),
    seed: Schema.optionalKey(RunSample.fields.seed.annotate({
      description: `An integer in 0 … ${maxSampleSeed}; without it the server draws one and records it on the run`
    }))
  }).annotate({
    identifier: "RunSampleRequest",
    description: "Ask a seeded sample of the dataset's usable rows instead of all of them (and instead of the " +
      "leaderboard's `max_samples_to_gather`). The same size and seed on the same dataset version choose the same " +
      "rows, in dataset order: send a run's `sample` again to repeat it."
  }))
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

const ImprovementView = Schema.Struct({
  id: Schema.String,
  leaderboard_id: Schema.String,
  status: Schema.Literals(["running", "succeeded", "failed"]),
  labeller: Schema.String.annotate({
    description: "Who proposes references: the judge model (`provider:model`), else the serving candidate (its " +
      "model_name, else its name)"
  }),
  replace_references: Schema.Boolean,
  total: Schema.Int.annotate({ description: "Rows to improve (distinct inputs)" }),
  improved: Schema.Int,
  failed: Schema.Int,
  version: Schema.NullOr(Schema.Int).annotate({ description: "The derived version it published (null: none, or not yet)" }),
  error: Schema.NullOr(Schema.String),
  created_at: IsoTimestamp,
  finished_at: Schema.NullOr(IsoTimestamp)
}).annotate({ identifier: "DatasetImprovement" })

const AgreementView = Schema.Struct({
  n: Schema.Int,
  percent_agreement: Schema.NullOr(Schema.Number),
  kappa: Schema.NullOr(Schema.Number),
  kappa_low: Schema.NullOr(Schema.Number),
  kappa_high: Schema.NullOr(Schema.Number),
  confusion: Schema.Struct({
    judge_correct_human_correct: Schema.Int,
    judge_correct_human_incorrect: Schema.Int,
    judge_incorrect_human_correct: Schema.Int,
    judge_incorrect_human_incorrect: Schema.Int
  })
}).annotate({ identifier: "JudgeAgreement" })

const params = { leaderboard_id: LeaderboardId }
const runParams = { leaderboard_id: LeaderboardId, run_id: RunId }
const run = "leaderboards:run" as const
const read = "leaderboards:read" as const

export class RunsApi extends HttpApiGroup.make("runs")
  .add(
    HttpApiEndpoint.post("start", "/api/leaderboards/:leaderboard_id/run", {
      params,
      // body optional: none at all is null (the platform decodes an empty body as null only when null is a payload)
      payload: [StartRunRequest, Schema.Null],
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
    HttpApiEndpoint.get("agreement", "/api/leaderboards/:leaderboard_id/runs/:run_id/agreement", {
      params: runParams,
      success: AgreementView,
      error: [NotFound, NotRunnable]
    }).annotateMerge(requiresScope(read)).annotateMerge(OpenApi.annotations({
      summary: "Judge-human agreement of a judge run",
      description: "Calibrates the judge: its verdicts on answers that people also judged in human evaluation (a " +
        "confirmed case of this workspace with the same input, whose response has the same text), with " +
        "abstentions and judge failures left out. `n` pairs, percent agreement, Cohen's kappa with its 95% interval " +
        "(large-sample standard error; null when undefined, e.g. no pairs or one class only on both sides) and " +
        "the confusion matrix. 409 `not_runnable` for runs scored exactly."
    })),
    HttpApiEndpoint.post("cancel", "/api/leaderboards/:leaderboard_id/runs/:run_id/cancel", {
      params: runParams,
      success: Schema.Struct({ run: RunView }),
      error: [NotFound, RunEnded]
    }).annotateMerge(requiresScope(run)).annotateMerge(OpenApi.annotations({
      summary: "Cancel a run",
      description: "The run stops asking within half a second (answers arriving after the cancel are not kept) " +
        "and the leaderboard gets its status back; its answers so far stay in its results. 409 `run_ended` when " +
        "it had ended."
    })),
    HttpApiEndpoint.post("improveDataset", "/api/leaderboards/:leaderboard_id/improve-dataset", {
      params,
      payload: [Schema.Struct({ replace_references: Schema.optionalKey(Schema.Boolean) }), Schema.Null],
      success: Schema.Struct({ improvement: ImprovementView }).pipe(HttpApiSchema.status(202)),
      error: [NotFound, LeaderboardArchived, NotRunnable, DatasetMissing]
    }).annotateMerge(requiresScope(run)).annotateMerge(OpenApi.annotations({
      summary: "Improve the dataset's references",
      description: "No body is needed. In the background, the leaderboard's labeller — its judge model " +
        "(`judge_provider`, `judge_model`), else its serving candidate of any platform, as for auto-labels; 409 " +
        "`not_runnable` without either — proposes a reference for every row without one and, with `replace_references: true`, for every row the " +
        "latest succeeded run's candidates disagree on (their answers are shown to it as hints). The proposals form " +
        "the leaderboard's next derived version: runs read them over the dataset's rows (`improved_rows` on the run), " +
        "for GET and PUSH datasets alike; the dataset's own rows and versions stay as they are. Given references are " +
        "kept unless `replace_references` is true. One job at a time: a second request answers the running one."
    })),
    HttpApiEndpoint.get("improvement", "/api/leaderboards/:leaderboard_id/improve-dataset", {
      params,
      success: Schema.Struct({ improvement: Schema.NullOr(ImprovementView) }),
      error: NotFound
    }).annotateMerge(requiresScope(read)).annotate(OpenApi.Summary, "The latest improve-dataset job")
  )
  .middleware(ApiTokenAuth)
  .annotateMerge(OpenApi.annotations({
    title: "Runs",
    description: "Runs ask every candidate every row of a leaderboard's dataset, score the answers, rank the " +
      "candidates on paired evidence and decide what serves; and dataset improvement."
  }))
{}
