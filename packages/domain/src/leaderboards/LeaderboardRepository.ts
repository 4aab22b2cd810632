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

/** Leaderboards and their candidates. Deleted leaderboards are kept but never returned. */
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
  readonly update: (leaderboard: Leaderboard) => Effect.Effect<void>
  /** Records the ranking's winner (null: none, or a tie). */
  readonly setRankingWinner: (id: LeaderboardId, candidateId: string | null) => Effect.Effect<void>
  readonly softDelete: (id: LeaderboardId, now: DateTime.Utc) => Effect.Effect<boolean>
  readonly candidates: (id: LeaderboardId) => Effect.Effect<ReadonlyArray<Candidate>>
  /** `sealedToken` is the candidate's credential, sealed by SecretCipher. */
  readonly insertCandidate: (candidate: Candidate, sealedToken: string | null) => Effect.Effect<void>
  /** Removes the candidate, and clears it as the chosen one, in one transaction. */
  readonly removeCandidate: (leaderboardId: LeaderboardId, id: CandidateId) => Effect.Effect<boolean>
}>()("@podium/domain/leaderboards/LeaderboardRepository") {}
