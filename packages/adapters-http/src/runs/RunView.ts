import { Schema } from "effect"
import { ServingDecision } from "@podium/domain/leaderboards"
import { CandidateResult, PairwiseResult, RunDataset, RunProgress, RunSample, RunSource, RunStatus } from "@podium/domain/runs"
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
      "competition ranking by score. Latencies are of answered calls; costs are the calls' (budgets do not apply). " +
      "The paired comparison adds (absent on runs that ended before it): `scored_rows` (rows with a verdict) and " +
      "`excluded_rows` (judge errors, failed calls, unscorable rows: left out of every pair); " +
      "`statistically_tied_with`, the candidates whose Holm-adjusted exact McNemar p against this one is at least " +
      "the serving policy's alpha; `rank_band` {best, worst}: best = 1 + the candidates significantly better, " +
      "worst = the candidates − those significantly worse."
  }),
  winner_leaderboard_model_id: Schema.NullOr(Schema.String).annotate({
    description: "Rank 1, ties broken by lower total cost, then lower p50 latency. It serves under `ranking_winner` " +
      "only when `serving_decision` says so (`first` or `switch`)"
  }),
  pairwise: Schema.NullOr(Schema.Array(PairwiseResult.annotate({ identifier: "RunPairwise" }))).annotate({
    description: "Every pair of candidates once (a before b in ranked order), compared on the rows both have a " +
      "verdict for: `wins` rows a got right and b wrong, `losses` the reverse, `ties` the rest; `p_value` the exact " +
      "McNemar test, `p_adjusted` Holm's over every pair of the run; `difference` a's score minus b's on those rows " +
      "with Newcombe's 95% interval (null: no shared row). Null until the run has succeeded."
  }),
  serving_decision: Schema.NullOr(ServingDecision.annotate({ identifier: "ServingDecision" })).annotate({
    description: "What the run decided about the candidate the ranking serves, under the leaderboard's " +
      "`serving_policy`: `first` (nothing served: the best score, the cheapest of those statistically tied with it), " +
      "`switch` (the top challenger beat the serving candidate on at least `min_rows` shared rows: Holm-adjusted " +
      "p below `alpha`, or non-inferior within `margin` and cheaper), `keep` or `none` (no candidate has a score). " +
      "`p_value` is Holm-adjusted, `difference` the challenger's score minus the serving one's. Every decision but " +
      "`none` is recorded in the leaderboard's serving history; under the `manual` strategy the chosen candidate " +
      "serves whatever the decision. Null until the run has succeeded."
  }),
  dataset: Schema.NullOr(RunDataset.annotate({ identifier: "RunDataset" })),
  error: Schema.NullOr(Schema.String),
  created_at: IsoTimestamp,
  started_at: Schema.NullOr(IsoTimestamp),
  finished_at: Schema.NullOr(IsoTimestamp)
}).annotate({ identifier: "Run" })

