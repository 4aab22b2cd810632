import { Context, type DateTime, type Effect, type Option } from "effect"
import type { LeaderboardId } from "../leaderboards/index.ts"
import type { ChatMessage, FineTuneRunId, ModelId, ModelVersionId } from "../shared/index.ts"
import type { FineTuneEvent, FineTuneRun, FineTuneStatus, Gate, RemoteJobRef, TrainingDataset } from "./FineTuneRun.ts"
import type { FineTuneInProgress } from "./ModelErrors.ts"
import type { Artifact, ModelVersion } from "./ModelVersion.ts"

/**
 * Fine-tune runs, their examples and the versions they make. A model has at most one active
 * (queued or running) run, enforced by the database. Examples are stored once per run; a run makes
 * at most one version, and a version never changes after it is created (only which version is
 * deployed does).
 */
export class FineTuneRepository extends Context.Service<FineTuneRepository, {
  /** FineTuneInProgress names the model's active run. */
  readonly create: (run: FineTuneRun) => Effect.Effect<void, FineTuneInProgress>
  readonly find: (id: FineTuneRunId) => Effect.Effect<Option.Option<FineTuneRun>>
  /** Newest first. */
  readonly list: (modelId: ModelId, page: { readonly limit: number; readonly offset: number }) => Effect.Effect<ReadonlyArray<FineTuneRun>>
  readonly queuedBefore: (cutoff: DateTime.Utc) => Effect.Effect<ReadonlyArray<FineTuneRun>>
  /** Stores the examples and marks the run running, once; false when it was started before (or ended). */
  readonly start: (
    runId: FineTuneRunId,
    dataset: TrainingDataset,
    examples: ReadonlyArray<TrainingExample>,
    now: DateTime.Utc
  ) => Effect.Effect<boolean>
  /** In index order. */
  readonly examples: (runId: FineTuneRunId, split: TrainingExample["split"]) => Effect.Effect<ReadonlyArray<TrainingExample>>
  /**
   * Records what is known of an active run so far: `remote`, `events` and `artifact` given replace
   * the stored ones, `metrics` given are merged into them (key by key). With `while_training`, only
   * while the run has no artifact yet (a look at the remote job never overwrites what later steps
   * wrote). False when nothing was written: the run has ended (or trained, with `while_training`).
   */
  readonly progress: (runId: FineTuneRunId, progress: {
    readonly remote?: RemoteJobRef | undefined
    readonly events?: ReadonlyArray<FineTuneEvent> | undefined
    readonly metrics?: Readonly<Record<string, unknown>> | undefined
    readonly artifact?: Artifact | undefined
    readonly while_training?: boolean | undefined
  }) => Effect.Effect<boolean>
  /** Ends an active run (creating its version when it succeeded); false when it had ended. */
  readonly end: (runId: FineTuneRunId, end: FineTuneEnd, now: DateTime.Utc) => Effect.Effect<boolean>
  /** Newest first. */
  readonly versions: (modelId: ModelId) => Effect.Effect<ReadonlyArray<ModelVersion>>
  readonly findVersion: (id: ModelVersionId) => Effect.Effect<Option.Option<ModelVersion>>
  /** The model's version deployed now, if any. */
  readonly activeVersion: (modelId: ModelId) => Effect.Effect<Option.Option<ModelVersion>>
  /** Makes the version the model's active one; the one active before is `stopped`. */
  readonly activate: (versionId: ModelVersionId, now: DateTime.Utc) => Effect.Effect<void>
}>()("@podium/domain/models/FineTuneRepository") {}

/** A row a fine-tune learns from (`training`) or measures on (`held_out`): the prompt as a model is asked it, and the reference. */
export interface TrainingExample {
  readonly index: number
  readonly split: "training" | "held_out"
  readonly leaderboard_id: LeaderboardId
  readonly input: string
  readonly reference: string
  readonly messages: ReadonlyArray<ChatMessage>
}

export interface FineTuneEnd {
  readonly status: Extract<FineTuneStatus, "succeeded" | "failed" | "cancelled">
  /** Created with the end (succeeded only), in the same transaction. */
  readonly version: ModelVersion | null
  readonly gate: Gate | null
  readonly error: string | null
}
