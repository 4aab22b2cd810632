import type { DateTime } from "effect"
import type { CaseId, ResponseId } from "./HumanEval.ts"
import type { Attachment, HumanCase } from "./HumanCase.ts"
import { type Tallies, tally } from "./HumanRanking.ts"

/** What a case adds to the results of its leaderboard: the ranking's tallies and the export. */

/** A confirmed case as `GET …/human/export` lists it: the reference, the accepted answers, the documents' metadata. */
export interface ExportRow {
  readonly case_id: CaseId
  readonly input: string
  readonly context: string
  readonly prompt: string
  readonly reference: string
  readonly notes: string
  readonly accepted_answers: ReadonlyArray<{
    readonly response_id: ResponseId
    readonly leaderboard_model_id: string
    readonly name: string
    readonly model_name: string | null
    readonly output: string | null
  }>
  /** Metadata and hashes only: never the documents' bytes or text. */
  readonly attachments: ReadonlyArray<Omit<Attachment, "text_chars">>
  readonly configuration: string
  readonly confirmed_at: DateTime.Utc
}

/**
 * The export row of a case: only confirmed cases, and only those with a reference or at least one
 * accepted (`correct`) answer.
 */
export const exportRow = (c: HumanCase): ExportRow | undefined => {
  if (c.stage._tag !== "Generated" || c.stage.review._tag !== "Confirmed") return undefined
  const review = c.stage.review
  const accepted = c.stage.responses.filter((r) => review.verdicts[r.response_id] === "correct")
  if (review.reference === "" && accepted.length === 0) return undefined
  return {
    case_id: c.id,
    input: c.input,
    context: c.context,
    prompt: c.prompt,
    reference: review.reference,
    notes: review.notes,
    accepted_answers: accepted.map((r) => ({
      response_id: r.response_id,
      leaderboard_model_id: r.candidate_id,
      name: r.candidate_name,
      model_name: r.model_name,
      output: r.output
    })),
    attachments: c.attachments.map(({ text_chars: _, ...a }) => a),
    configuration: c.configuration,
    confirmed_at: review.confirmed_at
  }
}

/**
 * What a generated case adds to its configuration's ranking tallies (HumanRanking.tally over this
 * case alone, its slots' candidates being the configuration's). Stored with the case, so a change
 * moves the tallies by the difference; drafts and generating cases add nothing.
 */
export const contributionOf = (c: HumanCase): Tallies | undefined => {
  if (c.stage._tag !== "Generated") return undefined
  const review = c.stage.review
  const confirmed = review._tag === "Confirmed"
  const verdicts = review._tag === "Unreviewed" ? {} : review.verdicts
  return tally(
    c.stage.responses.map((r) => ({ id: r.candidate_id, name: r.candidate_name })),
    [{
      confirmed,
      responses: c.stage.responses.map((r) => ({
        candidate_id: r.candidate_id,
        status: r.status,
        cost_usd: r.cost_usd,
        verdict: verdicts[r.response_id] ?? null
      }))
    }]
  )
}
