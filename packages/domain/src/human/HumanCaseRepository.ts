import { Context, type DateTime, type Effect, type Option, Schema } from "effect"
import type { HumanCase } from "./HumanCase.ts"
import type { CaseResponse, CaseStatus, ReviewInput, ReviewState } from "./CaseStage.ts"
import type { RankingCandidate, Tallies } from "./HumanRanking.ts"
import type { CaseId } from "./HumanEval.ts"
import type { HumanServingEntry, VerdictCase } from "./HumanServing.ts"
import type { UserId } from "../shared/index.ts"
import type { LeaderboardId } from "../leaderboards/index.ts"

export interface ReviewHistoryEntry {
  readonly revision: number
  readonly confirmed: boolean
  readonly review: ReviewInput
  readonly saved_by: UserId | null
  readonly saved_at: DateTime.Utc
}

/** The database refused a response's data (not a passing failure: saving it again would fail again). */
export class ResponseRefused extends Schema.TaggedError<ResponseRefused>()("ResponseRefused", {
  reason: Schema.String
}) {}

/** Which case: its client id is unique within its workspace only. */
export type CaseKey = Pick<HumanCase, "workspace_id" | "id">

/** What an insert found: the case is new, or the workspace's id was taken (by this case, another one, or a document). */
export type Inserted =
  | { readonly _tag: "Inserted" }
  | { readonly _tag: "Taken"; readonly existing: Option.Option<HumanCase> }

/** A case as the summary lists it. */
export interface CaseListItem {
  readonly id: CaseId
  readonly status: CaseStatus
  readonly review_state: ReviewState
  readonly revision: number
  readonly input: string
  /** Made under the leaderboard's current configuration (the cohort the ranking covers). */
  readonly current: boolean
  readonly created_at: DateTime.Utc
  readonly updated_at: DateTime.Utc
}

export interface CaseCounts {
  readonly total: number
  /** Not confirmed, over every configuration. */
  readonly pending: number
  /** Not confirmed, in the current configuration. */
  readonly current_pending: number
  readonly current_total: number
  /** The oldest pending case of the current configuration. */
  readonly next_pending_case: CaseId | null
}

/** The configuration a ranking is over, and its candidates: whose winner `ranking_winner` serves. */
export interface RankingCohort {
  readonly configuration: string
  readonly candidates: ReadonlyArray<RankingCandidate>
}

/**
 * Human-evaluation cases. Every change is conditional on the revision it was computed from, so two
 * requests (or instances) cannot both move a case: the loser's `update` answers false.
 */
export class HumanCaseRepository extends Context.Service<HumanCaseRepository, {
  readonly insert: (c: HumanCase) => Effect.Effect<Inserted>
  /** The case with its responses (in slot order), if it belongs to the leaderboard. */
  readonly find: (leaderboardId: LeaderboardId, id: CaseId) => Effect.Effect<Option.Option<HumanCase>>
  /**
   * Writes `next` over the stored case if that is still at revision `next.revision - 1`, with the
   * review's verdicts on the responses and the ranking's tallies moved, in one transaction.
   */
  readonly update: (next: HumanCase) => Effect.Effect<boolean>
  /**
   * `update` for a saved review, which also appends `history` and decides the leaderboard's
   * ranking winner over `cohort`, all in one transaction: the candidate `ranking_winner` serves
   * always follows from the stored reviews, whichever saves run at the same time. The decision is
   * the leaderboard's serving policy on the common rows (HumanServing.humanServing, the serving one
   * being the stored `ranking_winner`): the winner changes only on `first` or `switch`, and only
   * then is a `human` entry made of `serving` appended to the serving history (a `keep` after
   * every verdict would flood it).
   */
  readonly saveReview: (
    next: HumanCase,
    history: ReviewHistoryEntry,
    cohort: RankingCohort,
    serving: HumanServingEntry
  ) => Effect.Effect<boolean>
  /**
   * Stores a generated response; a second save for the same slot keeps the first (activities
   * repeat). Fails with `ResponseRefused` when the database refuses the response's data.
   */
  readonly saveResponse: (c: CaseKey, response: CaseResponse) => Effect.Effect<void, ResponseRefused>
  /** The responses stored so far, in the order of the case's slots (while generating: the finished ones). */
  readonly responses: (c: CaseKey) => Effect.Effect<ReadonlyArray<CaseResponse>>
  /** Counts over every case of the leaderboard; `configuration` names the current one. */
  readonly counts: (leaderboardId: LeaderboardId, configuration: string) => Effect.Effect<CaseCounts>
  /** A page of cases, oldest first. */
  readonly page: (
    leaderboardId: LeaderboardId,
    configuration: string,
    page: { readonly offset: number; readonly limit: number }
  ) => Effect.Effect<ReadonlyArray<CaseListItem>>
  /**
   * The ranking's tallies over the generated cases of `configuration`, computed where the data is
   * (HumanRanking.tally's rules, as one aggregate).
   */
  readonly tallies: (
    leaderboardId: LeaderboardId,
    configuration: string,
    candidateIds: ReadonlyArray<string>
  ) => Effect.Effect<Tallies>
  /**
   * The confirmed cases of `configuration` with their responses' candidates, statuses and current
   * verdicts (costs left out), keyed by case id: what the paired comparison reads.
   */
  readonly verdictCases: (leaderboardId: LeaderboardId, configuration: string) => Effect.Effect<ReadonlyArray<VerdictCase>>
  /** Every confirmed case of the leaderboard, with its responses, oldest first (any configuration). */
  readonly confirmed: (leaderboardId: LeaderboardId) => Effect.Effect<ReadonlyArray<HumanCase>>
  /** The newest `limit` review-history entries, newest first. */
  readonly history: (c: CaseKey, limit: number) => Effect.Effect<ReadonlyArray<ReviewHistoryEntry>>
}>()("@podium/domain/human/HumanCaseRepository") {}
