import { Context, type DateTime, type Effect, type Option, type Stream } from "effect"
import type { LeaderboardId } from "../leaderboards/index.ts"
import type { DatasetState, DatasetVersion, VersionTrigger } from "./Dataset.ts"
import type { AcceptedRow } from "./DatasetRow.ts"
import type { EventUsage, Periods } from "./EventLimits.ts"

/** A row to store: its place in the request and the id the service gave it. */
export interface RowToStore extends AcceptedRow {
  readonly index: number
  readonly id: string
}

export interface AppendInput {
  readonly leaderboardId: LeaderboardId
  readonly batchId: string
  readonly rows: ReadonlyArray<RowToStore>
  readonly now: DateTime.Utc
  readonly periods: Periods
  /**
   * How many new rows the event limits let in, given the periods' counts: asked while the
   * leaderboard's counts are locked, so concurrent pushes never let more in than the limits allow.
   * Undefined when there are no limits (nothing is locked then).
   */
  readonly allowance?: ((used: EventUsage) => number) | undefined
}

export interface AppendResult {
  /** Request indexes stored by this push. */
  readonly stored: ReadonlyArray<number>
  /** Request indexes whose `id` was stored before (a retry): kept as first stored, not counted again. */
  readonly retried: ReadonlyArray<number>
  /** Request indexes over the event limits: not stored. */
  readonly overLimit: ReadonlyArray<number>
  /** The dataset's bookkeeping after this push (its periods are the push's). */
  readonly state: DatasetState
}

export interface ConsolidateInput {
  readonly leaderboardId: LeaderboardId
  readonly now: DateTime.Utc
  readonly trigger: VersionTrigger
  readonly dedupe: boolean
  /** Keep only the newest N rows (null: all). */
  readonly newest: number | null
}

/** A leaderboard with rows waiting, and what its triggers need to know. */
export interface PendingDataset {
  readonly leaderboardId: LeaderboardId
  readonly state: DatasetState
}

/**
 * A PUSH dataset's rows and versions. Rows arrive pending; a consolidation turns the pending rows
 * into the next immutable version in one transaction, one consolidation at a time per leaderboard.
 */
export class DatasetRepository extends Context.Service<DatasetRepository, {
  /**
   * Stores the rows in one transaction, counting them against the periods; `rows` are in request
   * order and the limits take the first that fit. A success means the stored rows are committed.
   */
  readonly append: (input: AppendInput) => Effect.Effect<AppendResult>
  readonly state: (leaderboardId: LeaderboardId) => Effect.Effect<DatasetState>
  /** Versions, newest first. */
  readonly versions: (leaderboardId: LeaderboardId) => Effect.Effect<ReadonlyArray<DatasetVersion>>
  /** `state` and `versions` as of one moment: a consolidation committing meanwhile is seen whole or not at all. */
  readonly snapshot: (leaderboardId: LeaderboardId) => Effect.Effect<{
    readonly state: DatasetState
    readonly versions: ReadonlyArray<DatasetVersion>
  }>
  /**
   * The next version from the rows pending now (rows still arriving wait for the next one), or None
   * when nothing is pending. Its `sha256` is null until `hash` fills it in.
   */
  readonly consolidate: (input: ConsolidateInput) => Effect.Effect<Option.Option<DatasetVersion>>
  /** A version's rows as JSONL, one pushed row per line in arrival order, read in constant memory. */
  readonly download: (leaderboardId: LeaderboardId, version: number) => Stream.Stream<Uint8Array>
  /** Computes and records the SHA-256 of a version's download (again, harmlessly, when it has one). */
  readonly hash: (leaderboardId: LeaderboardId, version: number) => Effect.Effect<string>
  /** Versions created but not yet hashed (a crash between the two steps leaves some). */
  readonly unhashed: Effect.Effect<ReadonlyArray<{ readonly leaderboardId: LeaderboardId; readonly version: number }>>
  /** Leaderboards with pending rows, for the consolidation triggers. */
  readonly pending: Effect.Effect<ReadonlyArray<PendingDataset>>
}>()("@podium/domain/datasets/DatasetRepository") {}
