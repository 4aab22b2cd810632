import { Context, type Effect, Schema } from "effect"
import type { Principal } from "../access/index.ts"
import { RunId, TokenId, UserId, WorkspaceId } from "../shared/index.ts"
import { CandidateId, type Leaderboard, LeaderboardId } from "./Leaderboard.ts"

export const ServingEntryId = Schema.String.check(Schema.isUUID()).pipe(Schema.brand("ServingEntryId"))
export type ServingEntryId = typeof ServingEntryId.Type

/**
 * `manual`: a client changed the chosen strategy or candidate; `run`: a run's decision (keep
 * included); `human`: human ranking's decision; `rollback`: serving went back to the previous candidate.
 */
export const ServingEntryKind = Schema.Literals(["manual", "run", "human", "rollback"])
export type ServingEntryKind = typeof ServingEntryKind.Type

/** Who made a decision: a signed-in user, an API token, or the service itself (a run's, say). */
export const ServingActor = Schema.Union([
  Schema.Struct({ type: Schema.Literal("user"), id: UserId, run_id: Schema.optionalKey(RunId) }),
  Schema.Struct({ type: Schema.Literal("api_token"), id: TokenId, run_id: Schema.optionalKey(RunId) }),
  Schema.Struct({ type: Schema.Literal("system"), id: Schema.String, run_id: Schema.optionalKey(RunId) })
])
export type ServingActor = typeof ServingActor.Type

/** One decision about what a leaderboard serves: `from` what served before, `to` what serves after (equal: kept). */
export class ServingHistoryEntry extends Schema.Class<ServingHistoryEntry>("ServingHistoryEntry")({
  id: ServingEntryId,
  workspace_id: WorkspaceId,
  leaderboard_id: LeaderboardId,
  at: Schema.DateTimeUtc,
  kind: ServingEntryKind,
  from_candidate_id: Schema.NullOr(CandidateId),
  to_candidate_id: Schema.NullOr(CandidateId),
  actor: ServingActor,
  /** What the decision rested on (statistics, the fields a PATCH changed): JSON. */
  evidence: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  reason: Schema.NullOr(Schema.String)
}) {}

export interface ServingHistoryPage {
  /** Newest first: by `at`, then by id. */
  readonly entries: ReadonlyArray<ServingHistoryEntry>
  /** The last entry's id while older entries remain, else null: pass it as the next page's `cursor`. */
  readonly next_cursor: ServingEntryId | null
}

/**
 * A leaderboard's serving history: append-only. An entry is never changed or removed (Postgres
 * refuses both; the rows outlive a soft-deleted leaderboard and go only with its workspace).
 * Appending an id twice, or for a leaderboard never stored, dies as a broken rule of the caller's.
 */
export class ServingHistory extends Context.Service<ServingHistory, {
  readonly append: (entry: ServingHistoryEntry) => Effect.Effect<void>
  /**
   * The leaderboard's entries, newest first, at most `limit`, after `cursor` (a previous page's
   * `next_cursor`; one that names no entry of this leaderboard gives an empty page).
   */
  readonly list: (
    leaderboardId: LeaderboardId,
    page: { readonly limit: number; readonly cursor?: ServingEntryId | undefined }
  ) => Effect.Effect<ServingHistoryPage>
}>()("@podium/domain/leaderboards/ServingHistory") {}

/** There is no earlier candidate to go back to, or it is no longer a candidate. */
export class NoPreviousServing extends Schema.TaggedError<NoPreviousServing>()("NoPreviousServing", {
  leaderboard_id: Schema.String,
  message: Schema.String
}) {}

/**
 * The candidate a leaderboard serves: under `manual` the chosen one; otherwise the ranking's winner,
 * before any ranking the chosen one, else the only one. The rule of `Inference.servingCandidate`.
 */
export const servingCandidateId = (
  leaderboard: Pick<Leaderboard, "chosen_model_strategy" | "chosen_leaderboard_model_id">,
  candidates: ReadonlyArray<{ readonly id: CandidateId }>,
  rankingWinner: string | null
): CandidateId | null => {
  const byId = (id: string | null) => candidates.find((c) => c.id === id)?.id
  if (leaderboard.chosen_model_strategy === "manual") return byId(leaderboard.chosen_leaderboard_model_id) ?? null
  return byId(rankingWinner) ?? byId(leaderboard.chosen_leaderboard_model_id) ??
    (candidates.length === 1 ? candidates[0]!.id : null)
}

/** The principal as the actor of a decision. */
export const actorOf = (principal: Principal): ServingActor => {
  switch (principal._tag) {
    case "SessionPrincipal":
      return { type: "user", id: principal.user.id }
    case "ApiTokenPrincipal":
      return { type: "api_token", id: principal.token.id }
    case "PushTokenPrincipal":
      return { type: "system", id: `push_token:${principal.pushTokenId}` }
  }
}

/** Whether the entry changed what serves (a kept candidate did not). */
export const changedServing = (entry: Pick<ServingHistoryEntry, "from_candidate_id" | "to_candidate_id">): boolean =>
  entry.from_candidate_id !== entry.to_candidate_id
