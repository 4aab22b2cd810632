import { DateTime, Duration, Option, Result, Schema } from "effect"
import { type Challenge, type Leaderboard, LeaderboardArchived } from "../leaderboards/index.ts"
import { CollectionEnded, LeaderboardPaused, NotPushDataset } from "./DatasetErrors.ts"

/** What made a version: a consolidation (asked for, or by event count or elapsed hours) or auto-labels. */
export const VersionTrigger = Schema.Literals(["manual", "events", "hours", "auto_labels"])
export type VersionTrigger = typeof VersionTrigger.Type

/**
 * An immutable consolidated dataset: the rows of every earlier version and the pending rows it took,
 * less duplicates (`dedupe`) and rows beyond the newest N (`auto_limit_size`). `sha256` is the digest
 * of its JSONL download; it is null for the moment between the version's creation and its hashing.
 */
export class DatasetVersion extends Schema.Class<DatasetVersion>("DatasetVersion")({
  version: Schema.Int,
  row_count: Schema.Int,
  added_rows: Schema.Int,
  dropped_duplicates: Schema.Int,
  labelled_rows: Schema.Int,
  trigger: VersionTrigger,
  sha256: Schema.NullOr(Schema.String),
  created_at: Schema.DateTimeUtc
}) {}

/** A leaderboard's dataset bookkeeping, kept in one row per leaderboard. */
export interface DatasetState {
  readonly pending: number
  /** When the oldest pending row arrived (null with none pending). */
  readonly pending_since: DateTime.Utc | null
  readonly last_consolidated_at: DateTime.Utc | null
  readonly latest_version: number | null
  /** Counts of the periods stored, as of their last push: `day`/`month` say which periods they are. */
  readonly day: string | null
  readonly day_used: number
  readonly month: string | null
  readonly month_used: number
}

export const emptyState: DatasetState = {
  pending: 0,
  pending_since: null,
  last_consolidated_at: null,
  latest_version: null,
  day: null,
  day_used: 0,
  month: null,
  month_used: 0
}

type Triggers = Pick<Challenge, "consolidate_every_events" | "consolidate_every_hours">

/** When the hours trigger fires next: that many hours after the last consolidation (else the oldest pending row). */
export const nextTimedConsolidation = (challenge: Triggers, state: DatasetState): DateTime.Utc | null => {
  const hours = challenge.consolidate_every_hours
  const anchor = state.last_consolidated_at ?? state.pending_since
  return hours === null || hours <= 0 || anchor === null ? null : DateTime.addDuration(anchor, Duration.hours(hours))
}

/** Why the pending rows should be consolidated now, or null while no trigger has fired. */
export const consolidationDue = (challenge: Triggers, state: DatasetState, now: DateTime.Utc): VersionTrigger | null => {
  if (state.pending === 0) return null
  const events = challenge.consolidate_every_events
  if (events !== null && events > 0 && state.pending >= events) return "events"
  const at = nextTimedConsolidation(challenge, state)
  return at !== null && DateTime.isLessThanOrEqualTo(at, now) ? "hours" : null
}

/** How a consolidation treats the rows: `dedupe`, and the newest-N limit of `auto_limit_size`. */
export const consolidationRules = (challenge: Pick<Challenge, "dedupe" | "auto_limit_size" | "max_samples_to_gather">) => ({
  dedupe: challenge.dedupe,
  newest: challenge.auto_limit_size && challenge.max_samples_to_gather !== null && challenge.max_samples_to_gather > 0
    ? challenge.max_samples_to_gather
    : null
})

/** The `consolidation` object of push and status answers. */
export const consolidationView = (challenge: Triggers, state: DatasetState) => {
  const next = nextTimedConsolidation(challenge, state)
  return {
    pending_events: state.pending,
    every_events: challenge.consolidate_every_events,
    every_hours: challenge.consolidate_every_hours,
    events_until_next: challenge.consolidate_every_events === null
      ? null
      : Math.max(0, challenge.consolidate_every_events - state.pending),
    next_at: next === null || state.pending === 0 ? null : DateTime.formatIso(next),
    last_consolidated_at: state.last_consolidated_at === null ? null : DateTime.formatIso(state.last_consolidated_at)
  }
}

/** Rows are pushed only to PUSH datasets. */
export const checkPushDataset = (leaderboard: Pick<Leaderboard, "id" | "challenge">): Result.Result<void, NotPushDataset> =>
  leaderboard.challenge.dataset_type === "PUSH" ? Result.void : Result.fail(new NotPushDataset({ leaderboard_id: leaderboard.id }))

/** A leaderboard takes rows while it is a PUSH dataset, neither archived nor paused, before its `end_date`. */
export const checkCollecting = (
  leaderboard: Pick<Leaderboard, "id" | "status" | "challenge">,
  now: DateTime.Utc
): Result.Result<void, LeaderboardArchived | LeaderboardPaused | CollectionEnded | NotPushDataset> => {
  if (leaderboard.status === "archived") return Result.fail(new LeaderboardArchived({ leaderboard_id: leaderboard.id }))
  if (leaderboard.status === "paused") return Result.fail(new LeaderboardPaused({ leaderboard_id: leaderboard.id }))
  const end = leaderboard.challenge.end_date
  const at = end === null ? Option.none() : DateTime.make(end)
  if (end !== null && Option.isSome(at) && DateTime.isLessThanOrEqualTo(at.value, now)) {
    return Result.fail(new CollectionEnded({ leaderboard_id: leaderboard.id, end_date: end }))
  }
  return checkPushDataset(leaderboard)
}
