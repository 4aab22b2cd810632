import type { DateTime } from "effect"
import type { UserId } from "../shared/index.ts"
import type { CandidateId, LeaderboardId, Platform } from "../leaderboards/index.ts"
import type { CaseId, ResponseId, ResponseStatus } from "./HumanEval.ts"
import { type Attachment, type HumanCase, metadataOf } from "./HumanCase.ts"
import {
  type CaseResponse,
  type CaseStatus,
  caseStatus,
  Review,
  type ReviewInput,
  type ReviewState,
  reviewState,
  Stage
} from "./CaseStage.ts"
import type { ReviewHistoryEntry } from "./HumanCaseRepository.ts"

/** A case with what its page shows alongside it. */
export interface CaseDetail {
  readonly case: HumanCase
  /** Finished responses so far (while generating), else the case's responses. */
  readonly responses: ReadonlyArray<CaseResponse>
  /** How many responses the generation makes: one per slot (0 for a draft). */
  readonly response_total: number
  readonly history: ReadonlyArray<ReviewHistoryEntry>
  /** Whether the case was made under the leaderboard's current configuration. */
  readonly current: boolean
}

export interface ReviewerResponse {
  readonly id: ResponseId
  readonly label: string
  readonly status: ResponseStatus
  readonly output: string | null
  readonly error: string | null
  readonly latency_ms: number | null
  readonly created_at: DateTime.Utc
  readonly model: {
    readonly leaderboard_model_id: CandidateId
    readonly name: string
    readonly platform: Platform
    readonly model_name: string | null
  } | null
  readonly cost_usd: number | null
}

export interface ReviewerView {
  readonly id: CaseId
  readonly leaderboard_id: LeaderboardId
  readonly status: CaseStatus
  readonly review_state: ReviewState
  readonly revision: number
  readonly input: string
  readonly context: string
  readonly prompt_override: string | null
  readonly prompt: string
  readonly attachments: ReadonlyArray<Omit<Attachment, "text_chars">>
  readonly current: boolean
  readonly responses: ReadonlyArray<ReviewerResponse>
  readonly response_total: number
  readonly review: (ReviewInput & { readonly state: "draft" | "confirmed"; readonly saved_at: DateTime.Utc }) | null
  readonly history: ReadonlyArray<
    ReviewInput & { readonly revision: number; readonly confirmed: boolean; readonly saved_by: UserId | null; readonly saved_at: DateTime.Utc }
  >
  readonly created_at: DateTime.Utc
  readonly updated_at: DateTime.Utc
  readonly generated_at: DateTime.Utc | null
}

/** What the failure of a response still blind says, since the provider's reason may name the model. */
export const blindFailure = "The provider failed to answer"

const reviewInput = ({ notes, reference, verdicts }: ReviewInput): ReviewInput => ({ verdicts, reference, notes })

const reviewOf = (review: Review): ReviewerView["review"] =>
  Review.match(review, {
    Unreviewed: () => null,
    DraftReview: (r) => ({ state: "draft" as const, ...reviewInput(r), saved_at: r.saved_at }),
    Confirmed: (r) => ({ state: "confirmed" as const, ...reviewInput(r), saved_at: r.confirmed_at })
  })

/**
 * A case as the reviewer may see it. Blind until the review is first confirmed: a response is its
 * label and answer only, with no model, no cost, and for a failure no reason.
 */
export const reviewerView = ({ case: c, current, history, response_total, responses }: CaseDetail): ReviewerView => {
  const notGenerated = { generated_at: null, revealed: false, review: null }
  const { generated_at, revealed, review } = Stage.match(c.stage, {
    Draft: () => notGenerated,
    Generating: () => notGenerated,
    Generated: (s) => ({ generated_at: s.generated_at, revealed: s.revealed_at !== null, review: reviewOf(s.review) })
  })
  const response = (r: CaseResponse): ReviewerResponse => ({
    id: r.response_id,
    label: r.label,
    status: r.status,
    output: r.output,
    error: r.error === null ? null : revealed ? r.error : blindFailure,
    latency_ms: r.latency_ms,
    created_at: r.created_at,
    model: revealed
      ? { leaderboard_model_id: r.candidate_id, name: r.candidate_name, platform: r.platform, model_name: r.model_name }
      : null,
    cost_usd: revealed ? r.cost_usd : null
  })
  return {
    id: c.id,
    leaderboard_id: c.leaderboard_id,
    status: caseStatus(c),
    review_state: reviewState(c),
    revision: c.revision,
    input: c.input,
    context: c.context,
    prompt_override: c.prompt_override,
    prompt: c.prompt,
    attachments: c.attachments.map(metadataOf),
    current,
    responses: responses.map(response),
    response_total,
    review,
    history: history.map((h) => ({ revision: h.revision, confirmed: h.confirmed, ...reviewInput(h.review), saved_by: h.saved_by, saved_at: h.saved_at })),
    created_at: c.created_at,
    updated_at: c.updated_at,
    generated_at
  }
}
