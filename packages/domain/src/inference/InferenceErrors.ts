import { Schema } from "effect"

/** The leaderboard has no candidate to serve: no run winner and no chosen candidate. */
export class NoServingModel extends Schema.TaggedError<NoServingModel>()("NoServingModel", {
  leaderboard_id: Schema.String
}) {}

/** A Service candidate's model has no active deployment (models arrive with their own issue). */
export class NoActiveDeployment extends Schema.TaggedError<NoActiveDeployment>()("NoActiveDeployment", {
  model_id: Schema.String
}) {}

/** The serving candidate failed; the trace of the call holds the details. */
export class UpstreamFailed extends Schema.TaggedError<UpstreamFailed>()("UpstreamFailed", {
  candidate_id: Schema.String,
  candidate_name: Schema.String,
  reason: Schema.String,
  trace_id: Schema.String
}) {}
