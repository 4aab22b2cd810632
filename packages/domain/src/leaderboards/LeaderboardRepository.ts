import { Context, type DateTime, type Effect, type Option } from "effect"
import type { Candidate } from "./Candidate.ts"
import type { WorkspaceId } from "../shared/index.ts"
import type { CandidateId, Leaderboard, LeaderboardId } from "./Leaderboard.ts"

export interface Serving {
  readonly leaderboard: Leaderboard
  readonly candidates: ReadonlyArray<Candidate>
  /** Sealed credentials of the candidates that have one, by candidate id. */
  readonly credentials: ReadonlyMap<string, string>
  /** The candidate the ranking names (human evaluation's common rows), if any: what `ranking_winner` serves. */
  readonly ranking_winner: string | null
}

/**
 * Leaderboards and their candidates. Deleted leaderboards are kept but never returned. A write is
 * conditional on the version it was computed from, so two requests (or instances) cannot overwrite
 * each other: the loser's `update` answers false. A chosen candidate is a candidate of its
 * leaderboard (naming another dies, as a broken rule of the caller's); removing it clears the choice.
 */
export class LeaderboardRepository extends Context.Service<LeaderboardRepository, {
  readonly insert: (leaderboard: Leaderboard) => Effect.Effect<void>
  readonly list: (
    workspaceId: WorkspaceId,
    page: { readonly limit: number; readonly offset: number }
  ) => Effect.Effect<ReadonlyArray<Leaderboard>>
  /** Any workspace's: callers check visibility. */
  readonly find: (id: LeaderboardId) => Effect.Effect<Option.Option<Leaderboard>>
  /**
   * The leaderboard with its candidates (oldest first) and their sealed credentials, in one read:
   * what serving a call needs.
   */
  readonly findServing: (id: LeaderboardId) => Effect.Effect<Option.Option<Serving>>
  /**
   * As `findServing`, for the inference path: it may come from an instance-local copy. A change
   * made through this instance is seen at once; one committed elsewhere once the database's
   * announcement of it arrives (normally milliseconds). Never the basis of a write.
   */
  readonly servingSnapshot: (id: LeaderboardId) => Effect.Effect<Option.Option<Serving>>
  /**
   * Writes `next` over the stored leaderboard if that is still at version `next.version - 1` and not
   * deleted; false otherwise. Its id, workspace and creation time stay as stored.
   */
  readonly update: (next: Leaderboard) => Effect.Effect<boolean>
  /** Records the ranking's winner (null: none, or a tie). */
  readonly setRankingWinner: (id: LeaderboardId, candidateId: string | null) => Effect.Effect<void>
  /** Leaderboards whose schedule's `next_run_at` is at or before `now` (paused and archived ones too). */
  readonly dueSchedules: (now: DateTime.Utc) => Effect.Effect<ReadonlyArray<Leaderboard>>
  /**
   * Moves the schedule's `next_run_at` from `from` to `next` (a new version) if it is still `from`:
   * true for the one caller, of any instance, that claimed this occurrence.
   */
  readonly advanceSchedule: (id: LeaderboardId, from: string, next: string) => Effect.Effect<boolean>
  readonly softDelete: (id: LeaderboardId, now: DateTime.Utc) => Effect.Effect<boolean>
  readonly candidates: (id: LeaderboardId) => Effect.Effect<ReadonlyArray<Candidate>>
  /**
   * Stores the candidates, all in one transaction: all or (one refused) none. `sealedToken` is a
   * candidate's credential, sealed by SecretCipher.
   */
  readonly insertCandidates: (
    rows: ReadonlyArray<{ readonly candidate: Candidate; readonly sealedToken: string | null }>
  ) => Effect.Effect<void>
  /**
   * Removes the candidate and moves its leaderboard to the next version, in one transaction: a
   * chosen candidate is no longer chosen, and manual serving falls back to the ranking winner.
   */
  readonly removeCandidate: (leaderboardId: LeaderboardId, id: CandidateId) => Effect.Effect<boolean>
}>()("@podium/domain/leaderboards/LeaderboardRepository") {}
