import { Schema } from "effect"
import { CandidateResult, RunDataset, RunProgress, RunSample, RunSource, RunStatus } from "@podium/domain/runs"
import { IsoTimestamp } from "../api/Schemas.ts"

/** The Run object of the contract, with the per-candidate `score_low`/`score_high` (Wilson 95%). */
export const RunView = Schema.Struct({
  // typed as the RunId it is, with no check added to the document (brand changes no schema)
  id: Schema.String.pipe(Schema.brand("RunId")),
  leaderboard_id: Schema.String,
  status: RunStatus,
  run_source: RunSource,
  eval_type: Schema.Literals(["exact", "judge"]),
  model_ids: Schema.Array(Schema.String),
  improve_dataset: Schema.Boolean,
  sample: Schema.NullOr(RunSample.annotate({ identifier: "RunSample" })).annotate({
    description: "The sample the run was asked for (`sample` in the start request), with the seed the server drew " +
      "when the request gave none; null: every usable row (or the leaderboard's `max_samples_to_gather`). Start a " +
      "run with this `sample` to ask the same rows of the same dataset version"
  }),
  progress: RunProgress.annotate({
    description: "Cells (rows × candidates): `completed` counts every answered cell, `failed` those with an error"
  }),
  results: Schema.Array(CandidateResult.annotate({ identifier: "RunResult" })).annotate({
    description: "One per candidate, best first, once the run has succeeded. `score` = correct / total, where total " +
      "counts the cells with a verdict (a candidate's failed call is an incorrect verdict and an error; a judge " +
      "failure is an error without a verdict); `score_low`/`score_high` is its Wilson 95% interval; `rank` is " +
      "competition ranking by score. Latencies are of answered calls; costs are the calls' (budgets do not apply)."
  }),
  winner_leaderboard_model_id: Schema.NullOr(Schema.String).annotate({
    description: "Rank 1, ties broken by lower total cost, then lower p50 latency: what `ranking_winner` serves"
  }),
  dataset: Schema.NullOr(RunDataset.annotate({ identifier: "RunDataset" })),
  error: Schema.NullOr(Schema.String),
  created_at: IsoTimestamp,
  started_at: Schema.NullOr(IsoTimestamp),
  finished_at: Schema.NullOr(IsoTimestamp)
}).annotate({ identifier: "Run" })

