import { Schema } from "effect"
import { CandidateId, Platform } from "../leaderboards/index.ts"
import { ResponseId, ResponseStatus, Verdict } from "./HumanEval.ts"

/**
 * Where a human-evaluation case stands (spec part 3), as tagged unions, so a draft cannot hold
 * responses and a generated case cannot lose them:
 *
 *   Draft --claim--> Generating --complete--> Generated(review: Unreviewed | DraftReview | Confirmed)
 *
 * Read them with `Stage.match` / `Review.match` (or the functions below, built on them): a handler
 * per variant, so a new state is a compile error wherever it is not handled yet.
 */

/** Where a response will go: its id and blind label are fixed when the generation is claimed. */
export const Slot = Schema.Struct({
  response_id: ResponseId,
  candidate_id: CandidateId,
  /** "A", "B", … in a per-case shuffled order: all a reviewer sees of the model before confirming. */
  label: Schema.String,
  /** Who answers, kept with the case (candidates may be removed later); shown only once revealed. */
  candidate_name: Schema.String,
  platform: Platform,
  model_name: Schema.NullOr(Schema.String)
})
export type Slot = typeof Slot.Type

export const ChatUsage = Schema.Struct({
  prompt_tokens: Schema.Number,
  completion_tokens: Schema.Number,
  total_tokens: Schema.Number
})

export const CaseResponse = Schema.Struct({
  ...Slot.fields,
  status: ResponseStatus,
  output: Schema.NullOr(Schema.String),
  /** Why the provider failed (failed responses only). */
  error: Schema.NullOr(Schema.String),
  latency_ms: Schema.NullOr(Schema.Number),
  usage: Schema.NullOr(ChatUsage),
  cost_usd: Schema.NullOr(Schema.Number),
  trace_id: Schema.NullOr(Schema.String),
  created_at: Schema.DateTimeUtc
})
export type CaseResponse = typeof CaseResponse.Type

export const Verdicts = Schema.Record(Schema.String, Verdict)
export type Verdicts = typeof Verdicts.Type

export const ReviewInput = Schema.Struct({
  verdicts: Verdicts,
  reference: Schema.String,
  notes: Schema.String
})
export type ReviewInput = typeof ReviewInput.Type

export const Review = Schema.TaggedUnion({
  Unreviewed: {},
  DraftReview: { ...ReviewInput.fields, saved_at: Schema.DateTimeUtc },
  Confirmed: { ...ReviewInput.fields, confirmed_at: Schema.DateTimeUtc }
})
export type Review = typeof Review.Type

export const Stage = Schema.TaggedUnion({
  Draft: {},
  Generating: {
    claim_id: Schema.String,
    claimed_at: Schema.DateTimeUtc,
    slots: Schema.Array(Slot)
  },
  Generated: {
    generated_at: Schema.DateTimeUtc,
    responses: Schema.Array(CaseResponse),
    review: Review,
    /** Set by the first confirmation: from then on the responses show their models. */
    revealed_at: Schema.NullOr(Schema.DateTimeUtc)
  }
})
export type Stage = typeof Stage.Type

/** A case's stage, as the API and the database name it. */
export type CaseStatus = "draft" | "generating" | "generated"

export const caseStatus = (c: { readonly stage: Stage }): CaseStatus =>
  Stage.match(c.stage, {
    Draft: () => "draft" as const,
    Generating: () => "generating" as const,
    Generated: () => "generated" as const
  })

/** A case's review, as the API and the database name it: only a generated case has one. */
export type ReviewState = "none" | "draft" | "confirmed"

export const reviewState = (c: { readonly stage: Stage }): ReviewState =>
  Stage.match(c.stage, {
    Draft: () => "none" as const,
    Generating: () => "none" as const,
    Generated: ({ review }) =>
      Review.match(review, {
        Unreviewed: () => "none" as const,
        DraftReview: () => "draft" as const,
        Confirmed: () => "confirmed" as const
      })
  })
