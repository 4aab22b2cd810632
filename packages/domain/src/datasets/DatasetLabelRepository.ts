import { Context, type DateTime, type Effect, type Option } from "effect"
import type { LabelJob } from "./LabelJob.ts"

/** A row waiting for a label: its id and the row as pushed. */
export interface UnlabelledRow {
  readonly id: string
  readonly data: Record<string, unknown>
}

/** Auto-labels jobs and the labels they write (unpublished until the job publishes a version). */
export class DatasetLabelRepository extends Context.Service<DatasetLabelRepository, {
  /** Stores the job, unless one is running for the leaderboard already: then that one is answered. */
  readonly start: (job: LabelJob) => Effect.Effect<LabelJob>
  readonly find: (jobId: string) => Effect.Effect<Option.Option<LabelJob>>
  readonly latest: (leaderboardId: string) => Effect.Effect<Option.Option<LabelJob>>
  /** Rows of the version without a reference and without a published label. */
  readonly countUnlabelled: (leaderboardId: string, version: number) => Effect.Effect<number>
  /** Up to `size` of those rows after `afterId` (in id order), skipping those this job labelled already. */
  readonly unlabelled: (job: LabelJob, afterId: string | null, size: number) => Effect.Effect<ReadonlyArray<UnlabelledRow>>
  /** Records a label (once per row: a retry of the same row changes nothing) and counts it. */
  readonly saveLabel: (job: LabelJob, rowId: string, reference: string, now: DateTime.Utc) => Effect.Effect<void>
  readonly countFailure: (job: LabelJob) => Effect.Effect<void>
  /**
   * Publishes the job's labels as the next version (its rows are the latest version's) and marks the
   * job succeeded; answers the version, or None when it labelled nothing. Idempotent.
   */
  readonly publish: (job: LabelJob, now: DateTime.Utc) => Effect.Effect<Option.Option<number>>
  readonly fail: (job: LabelJob, error: string, now: DateTime.Utc) => Effect.Effect<void>
}>()("@podium/domain/datasets/DatasetLabelRepository") {}
