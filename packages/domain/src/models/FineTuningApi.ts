import { Context, type Effect, type Option, Schema } from "effect"
import type { ChatTarget } from "../inference/index.ts"

/** A remote fine-tuning job's state, as the `openai` trainer reads it. */
export const RemoteJobStatus = Schema.Literals(["queued", "running", "succeeded", "failed", "cancelled"])
export type RemoteJobStatus = typeof RemoteJobStatus.Type

export interface RemoteJob {
  readonly id: string
  /** OpenAI's `validating_files` and `queued` are `queued`; `running` is running. */
  readonly status: RemoteJobStatus
  /** The tuned model's name, once the job succeeded. */
  readonly fine_tuned_model: string | null
  readonly trained_tokens: number | null
  /** The job's own error message, when it failed. */
  readonly error: string | null
}

/** One event of a remote job (`GET /fine_tuning/jobs/{id}/events`), oldest first. */
export interface RemoteEvent {
  readonly id: string
  /** ISO 8601. */
  readonly created_at: string
  readonly level: string
  readonly message: string
  /** Training metrics an event carries (`step`, `train_loss`, ...), when it carries any. */
  readonly metrics: Readonly<Record<string, number>> | null
}

export interface CreateJob {
  readonly model: string
  readonly training_file: string
  readonly validation_file: string | null
  /** Identifies the job as this run's, so a restart can find it instead of creating another. */
  readonly metadata: Readonly<Record<string, string>>
  readonly suffix: string | null
  /** Sent as `method: {type: "supervised", supervised: {hyperparameters}}` when given. */
  readonly hyperparameters: Readonly<Record<string, number | "auto">> | null
}

/** The fine-tuning service refused or could not be reached; `retryable` when trying again later may help. */
export class FineTuningFailed extends Schema.TaggedError<FineTuningFailed>()("FineTuningFailed", {
  reason: Schema.String,
  status: Schema.NullOr(Schema.Number),
  retryable: Schema.Boolean
}) {}

/**
 * An OpenAI-compatible fine-tuning API (`FINE_TUNE_BASE_URL`, `FINE_TUNE_API_KEY`): OpenAI's, or a
 * provider's that copies it. Files are uploaded with purpose `fine-tune`; jobs are created,
 * followed, listed by metadata and cancelled. Its key never leaves the adapter except inside the
 * chat target used to call base and tuned models on the same service.
 */
export class FineTuningApi extends Context.Service<FineTuningApi, {
  /** False when FINE_TUNE_BASE_URL is not set: the `openai` trainer is not offered. */
  readonly configured: boolean
  readonly upload: (filename: string, jsonl: string) => Effect.Effect<string, FineTuningFailed>
  readonly create: (job: CreateJob) => Effect.Effect<RemoteJob, FineTuningFailed>
  /** The newest job whose metadata has `key: value`, if any. */
  readonly findByMetadata: (key: string, value: string) => Effect.Effect<Option.Option<RemoteJob>, FineTuningFailed>
  readonly job: (id: string) => Effect.Effect<RemoteJob, FineTuningFailed>
  /** The job's events, oldest first (every page). */
  readonly events: (id: string) => Effect.Effect<ReadonlyArray<RemoteEvent>, FineTuningFailed>
  readonly cancel: (id: string) => Effect.Effect<void, FineTuningFailed>
  /** How to call `model` (a base or tuned model) by chat completions on the same service. */
  readonly chatTarget: (model: string) => ChatTarget
}>()("@podium/domain/models/FineTuningApi") {}
