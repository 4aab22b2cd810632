import { Context, type DateTime, type Effect, type Option } from "effect"
import type { LeaderboardId } from "../leaderboards/index.ts"
import type { Improvement, ImprovementId, ImprovementTarget } from "./Improvement.ts"

/** A target as stored: its place in the job. */
export interface StoredTarget extends ImprovementTarget {
  readonly key: string
}

/**
 * Improve-dataset jobs, their targets, and the improved references they publish. One job runs per
 * leaderboard at a time. A proposed reference is saved once per target; publishing makes the job's
 * references the leaderboard's next derived version, replacing older references of the same inputs.
 */
export class ImprovementRepository extends Context.Service<ImprovementRepository, {
  /** Stores the job, unless one is running for the leaderboard: then that one is answered. */
  readonly start: (job: Improvement) => Effect.Effect<Improvement>
  /** Stores the job's targets and counts them, once (a repeat changes nothing). */
  readonly prepare: (jobId: ImprovementId, targets: ReadonlyArray<StoredTarget>) => Effect.Effect<void>
  readonly find: (id: string) => Effect.Effect<Option.Option<Improvement>>
  readonly latest: (leaderboardId: string) => Effect.Effect<Option.Option<Improvement>>
  /** Up to `size` targets after index `after` without a proposal yet, in index order. */
  readonly pending: (jobId: ImprovementId, after: number, size: number) => Effect.Effect<ReadonlyArray<StoredTarget>>
  readonly propose: (jobId: ImprovementId, index: number, reference: string | null) => Effect.Effect<void>
  /** The job's proposals become the next derived version; the job succeeds. Idempotent. */
  readonly publish: (jobId: ImprovementId, now: DateTime.Utc) => Effect.Effect<void>
  readonly fail: (jobId: ImprovementId, error: string, now: DateTime.Utc) => Effect.Effect<void>
  /** The improved references of these inputs (by key), and the derived version they belong to. */
  readonly references: (
    leaderboardId: LeaderboardId,
    keys: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyMap<string, { readonly reference: string; readonly version: number }>>
  /** What the latest succeeded run's candidates answered, by input key. */
  readonly latestAnswers: (leaderboardId: LeaderboardId) => Effect.Effect<ReadonlyMap<string, ReadonlyArray<string>>>
}>()("@podium/domain/runs/ImprovementRepository") {}
