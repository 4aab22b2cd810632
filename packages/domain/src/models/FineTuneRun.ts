import { Schema } from "effect"
import { LeaderboardId } from "../leaderboards/index.ts"
import { FineTuneRunId, ModelId, ModelVersionId, WorkspaceId } from "../shared/index.ts"
import { DatasetSize, SelectionAlgorithm } from "./Model.ts"
import { Artifact } from "./ModelVersion.ts"
import { BaseModel, Trainer } from "./BaseModel.ts"
import { GateDifference, GatePolicy } from "./GatePolicy.ts"

export const FineTuneStatus = Schema.Literals(["queued", "running", "succeeded", "failed", "cancelled"])
export type FineTuneStatus = typeof FineTuneStatus.Type
export const FineTuneTrigger = Schema.Literals(["manual", "schedule", "continuous"])
export type FineTuneTrigger = typeof FineTuneTrigger.Type

/** A fine-tune that has not ended holds its model: one at a time. */
export const isActive = (status: FineTuneStatus) => status === "queued" || status === "running"


/** What a run was asked to do. */
export const FineTuneOptions = Schema.Struct({
  dataset_size: DatasetSize,
  create_synthetic_data: Schema.Boolean,
  hypertuning_enabled: Schema.Boolean
})
export type FineTuneOptions = typeof FineTuneOptions.Type

/** One leaderboard's rows a run learned from. */
export const TrainingSource = Schema.Struct({
  leaderboard_id: LeaderboardId,
  dataset_type: Schema.Literals(["GET", "PUSH"]),
  version: Schema.NullOr(Schema.Int),
  url: Schema.NullOr(Schema.String),
  /** Rows with an input and a reference. */
  rows: Schema.Int
})
export type TrainingSource = typeof TrainingSource.Type

/** The rows a run trained and measured on, fixed when it starts (the seed reproduces the choice). */
export const TrainingDataset = Schema.Struct({
  mode: Schema.Literals(["LIMIT", "ALL"]),
  algorithm: SelectionAlgorithm,
  /** The rows asked for; null: every row. */
  limit: Schema.NullOr(Schema.Int),
  seed: Schema.String,
  held_out: Schema.Number,
  available_rows: Schema.Int,
  /** Rows whose reference was written by the leaderboard's judge model (`create_synthetic_data`). */
  synthetic_rows: Schema.Int,
  training_rows: Schema.Int,
  held_out_rows: Schema.Int,
  sources: Schema.Array(TrainingSource)
})
export type TrainingDataset = typeof TrainingDataset.Type

/** The remote job of an `openai` run; ids only (the service's key never is). */
export const RemoteJobRef = Schema.Struct({
  job_id: Schema.String,
  /** Null when the job was found again after a restart (the upload's id was not recorded). */
  training_file: Schema.NullOr(Schema.String),
  validation_file: Schema.NullOr(Schema.String),
  status: Schema.String
})
export type RemoteJobRef = typeof RemoteJobRef.Type

export const FineTuneEvent = Schema.Struct({
  at: Schema.String,
  level: Schema.String,
  message: Schema.String
})
export type FineTuneEvent = typeof FineTuneEvent.Type

/**
 * `auto_update_model`'s gate on a scheduled or continuous run (decideGate): the new version is
 * deployed only if, on the same held-out rows, it is non-inferior to the deployed one and not
 * significantly worse. The paired statistics and the policy are absent from gates recorded before
 * they were (which compared the two scores only).
 */
export const Gate = Schema.Struct({
  candidate_score: Schema.NullOr(Schema.Number),
  deployed_score: Schema.NullOr(Schema.Number),
  deployed_version_id: Schema.NullOr(Schema.String),
  decision: Schema.Literals(["deploy", "keep"]),
  reason: Schema.String,
  /** Held-out rows both versions have a verdict on. */
  shared_rows: Schema.optionalKey(Schema.Int),
  /** Shared rows the new version gets right and the deployed one wrong. */
  wins: Schema.optionalKey(Schema.Int),
  /** Shared rows the new version gets wrong and the deployed one right. */
  losses: Schema.optionalKey(Schema.Int),
  /** Two-sided exact McNemar p of wins against losses; null when nothing was deployed. */
  p_value: Schema.optionalKey(Schema.NullOr(Schema.Number)),
  /** New minus deployed on the shared rows, with its 95% interval (Newcombe); null when none. */
  difference: Schema.optionalKey(Schema.NullOr(GateDifference)),
  /** The model's gate policy the decision was taken under. */
  policy: Schema.optionalKey(GatePolicy)
})
export type Gate = typeof Gate.Type

export class FineTuneRun extends Schema.Class<FineTuneRun>("FineTuneRun")({
  id: FineTuneRunId,
  model_id: ModelId,
  workspace_id: WorkspaceId,
  status: FineTuneStatus,
  trigger: FineTuneTrigger,
  trainer: Trainer,
  base_model: BaseModel,
  options: FineTuneOptions,
  dataset: Schema.NullOr(TrainingDataset),
  remote: Schema.NullOr(RemoteJobRef),
  metrics: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  events: Schema.Array(FineTuneEvent),
  /** What training made, kept here until the version is created from it; private, never shown. */
  artifact: Schema.NullOr(Artifact),
  version_id: Schema.NullOr(ModelVersionId),
  gate: Schema.NullOr(Gate),
  error: Schema.NullOr(Schema.String),
  created_at: Schema.DateTimeUtc,
  started_at: Schema.NullOr(Schema.DateTimeUtc),
  finished_at: Schema.NullOr(Schema.DateTimeUtc)
}) {}

/** Events kept per run (the newest). */
export const maxEvents = 200
