import { type DateTime, Result, Schema } from "effect"
import { InvalidInput, WorkspaceId } from "../shared/index.ts"
import { CaseId, DocumentId, DocumentScope, limits, ResponseId, ResponseStatus, Verdict } from "./HumanEval.ts"
import {
  CaseNotGenerated,
  ConfigurationChanged,
  GenerationInProgress,
  ImmutableCase,
  InvalidVerdicts,
  StaleRevision
} from "./HumanEvalErrors.ts"
import { type Candidate, Platform, CandidateId, LeaderboardId } from "../leaderboards/index.ts"
import { type Tallies, tally } from "./HumanRanking.ts"

/**
 * A human-evaluation case and its lifecycle (spec part 3). The stage is a tagged union, so a
 * draft cannot hold responses and a generated case cannot lose them:
 *
 *   Draft --claim--> Generating --complete--> Generated(review: Unreviewed | Draft | Confirmed)
 *
 * Every transition is a pure function `(case, input, now) => Result<case, error>` and increments
 * `revision`; a stale revision is refused. Only drafts take a new configuration; a generated case
 * changes only by its review.
 */

/** A document as a case carries it: the metadata snapshotted into the draft, never the bytes. */
export const Attachment = Schema.Struct({
  id: DocumentId,
  name: Schema.String,
  scope: DocumentScope,
  media_type: Schema.String,
  size_bytes: Schema.Int,
  sha256: Schema.String,
  text_chars: Schema.Int
})
export type Attachment = typeof Attachment.Type

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

export class HumanCase extends Schema.Class<HumanCase>("HumanCase")({
  id: CaseId,
  leaderboard_id: LeaderboardId,
  workspace_id: WorkspaceId,
  input: Schema.String,
  context: Schema.String,
  /** null inherits the leaderboard's base prompt; "" is an intentional empty prompt. */
  prompt_override: Schema.NullOr(Schema.String),
  /** The prompt the candidates get: the override, else the base prompt when the draft was saved. */
  prompt: Schema.String,
  attachments: Schema.Array(Attachment),
  /** The leaderboard configuration (candidates, base prompt) the draft was made under. */
  configuration: Schema.String,
  /** `creationKey` of the request that created the case, to tell a retry from a reuse of the id. */
  creation_key: Schema.String,
  revision: Schema.Int,
  stage: Stage,
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc
}) {}

export interface CreateInput {
  readonly id: CaseId
  readonly input: string
  readonly context?: string | undefined
  readonly prompt_override?: string | null | undefined
}

const tooLong = (field: string, max: number) =>
  new InvalidInput({ message: `${field} is longer than ${max.toLocaleString("en")} characters`, path: [field] })

/** Part 2's rules on a case body: a nonblank input; input, context and prompt up to 32,000 characters. */
export const checkCaseText = (input: CreateInput): Result.Result<void, InvalidInput> => {
  if (input.input.trim() === "") return Result.fail(new InvalidInput({ message: "input must not be blank", path: ["input"] }))
  if (input.input.length > limits.caseText) return Result.fail(tooLong("input", limits.caseText))
  if ((input.context ?? "").length > limits.caseText) return Result.fail(tooLong("context", limits.caseText))
  if ((input.prompt_override ?? "").length > limits.caseText) return Result.fail(tooLong("prompt_override", limits.caseText))
  return Result.void
}

/** A new draft, with the configuration and shared documents of this moment. */
export const createCase = (input: CreateInput & {
  readonly attachment_ids?: ReadonlyArray<string> | undefined
  readonly leaderboardId: LeaderboardId
  readonly workspaceId: WorkspaceId
  readonly basePrompt: string
  readonly attachments: ReadonlyArray<Attachment>
  readonly configuration: string
  readonly now: DateTime.Utc
}): Result.Result<HumanCase, InvalidInput> =>
  Result.map(checkCaseText(input), () => {
    const prompt_override = input.prompt_override ?? null
    return new HumanCase({
      id: input.id,
      leaderboard_id: input.leaderboardId,
      workspace_id: input.workspaceId,
      input: input.input,
      context: input.context ?? "",
      prompt_override,
      prompt: prompt_override ?? input.basePrompt,
      attachments: input.attachments,
      configuration: input.configuration,
      creation_key: creationKey(input),
      revision: 1,
      stage: Stage.cases.Draft.make({}),
      created_at: input.now,
      updated_at: input.now
    })
  })

const next = (c: HumanCase, changes: Partial<HumanCase>, now: DateTime.Utc) =>
  new HumanCase({ ...c, ...changes, revision: c.revision + 1, updated_at: now })

const atRevision = (c: HumanCase, revision: number): Result.Result<void, StaleRevision> =>
  revision === c.revision
    ? Result.void
    : Result.fail(new StaleRevision({ case_id: c.id, revision, current_revision: c.revision }))

/** Why a case that is not a draft cannot be configured or generated. */
const notDraft = (c: HumanCase): GenerationInProgress | ImmutableCase =>
  c.stage._tag === "Generating" ? new GenerationInProgress({ case_id: c.id }) : new ImmutableCase({ case_id: c.id })

/** PUT config: only a draft, at its current revision; null restores the base prompt. */
export const saveConfig = (
  c: HumanCase,
  input: { readonly revision: number; readonly prompt_override: string | null; readonly basePrompt: string },
  now: DateTime.Utc
): Result.Result<HumanCase, StaleRevision | ImmutableCase | GenerationInProgress | InvalidInput> => {
  if (c.stage._tag !== "Draft") return Result.fail(notDraft(c))
  if ((input.prompt_override ?? "").length > limits.caseText) return Result.fail(tooLong("prompt_override", limits.caseText))
  return Result.map(atRevision(c, input.revision), () =>
    next(c, { prompt_override: input.prompt_override, prompt: input.prompt_override ?? input.basePrompt }, now))
}

/**
 * POST generate: a draft whose configuration is still the leaderboard's is claimed, with one slot
 * per candidate. The database holds the same rule (a conditional update), so only one claim wins.
 */
export const claim = (
  c: HumanCase,
  input: { readonly configuration: string; readonly claimId: string; readonly slots: ReadonlyArray<Slot> },
  now: DateTime.Utc
): Result.Result<HumanCase, ConfigurationChanged | GenerationInProgress | ImmutableCase> => {
  if (c.stage._tag !== "Draft") return Result.fail(notDraft(c))
  if (input.configuration !== c.configuration) return Result.fail(new ConfigurationChanged({ case_id: c.id }))
  return Result.succeed(next(c, {
    stage: Stage.cases.Generating.make({ claim_id: input.claimId, claimed_at: now, slots: [...input.slots] })
  }, now))
}

/** The claim's generation is done: one response per slot, each succeeded or failed. */
export const complete = (
  c: HumanCase,
  input: { readonly claimId: string; readonly responses: ReadonlyArray<CaseResponse> },
  now: DateTime.Utc
): Result.Result<HumanCase, ImmutableCase | InvalidInput> => {
  if (c.stage._tag !== "Generating" || c.stage.claim_id !== input.claimId) return Result.fail(new ImmutableCase({ case_id: c.id }))
  const slots = c.stage.slots
  const matches = slots.length === input.responses.length &&
    slots.every((slot) => input.responses.some((r) => r.response_id === slot.response_id && r.candidate_id === slot.candidate_id))
  if (!matches) {
    return Result.fail(new InvalidInput({ message: "responses must answer the claimed slots one for one", path: ["responses"] }))
  }
  const ordered = slots.map((slot) => input.responses.find((r) => r.response_id === slot.response_id)!)
  return Result.succeed(next(c, {
    stage: Stage.cases.Generated.make({
      generated_at: now,
      responses: ordered,
      review: Review.cases.Unreviewed.make({}),
      revealed_at: null
    })
  }, now))
}

/**
 * The verdict rules: verdicts name only this case's succeeded responses; to confirm, every
 * succeeded response has one (so failed responses never do).
 */
export const checkVerdicts = (
  c: HumanCase,
  responses: ReadonlyArray<CaseResponse>,
  verdicts: Verdicts,
  confirm: boolean
): Result.Result<void, InvalidVerdicts> => {
  const succeeded = new Set(responses.filter((r) => r.status === "succeeded").map((r) => r.response_id as string))
  const stray = Object.keys(verdicts).filter((id) => !succeeded.has(id))
  if (stray.length > 0) {
    return Result.fail(new InvalidVerdicts({
      case_id: c.id,
      message: "Verdicts may only name succeeded responses of this case",
      response_ids: stray
    }))
  }
  const missing = [...succeeded].filter((id) => verdicts[id] === undefined)
  if (confirm && missing.length > 0) {
    return Result.fail(new InvalidVerdicts({
      case_id: c.id,
      message: "To confirm, every succeeded response needs a verdict",
      response_ids: missing
    }))
  }
  return Result.void
}

/**
 * PUT review: a generated case at its current revision. `confirm: false` saves a draft review
 * (withdrawing any confirmed score until reconfirmed); `confirm: true` confirms, which reveals the
 * models for good.
 */
export const saveReview = (
  c: HumanCase,
  input: { readonly revision: number; readonly confirm: boolean; readonly review: ReviewInput },
  now: DateTime.Utc
): Result.Result<HumanCase, StaleRevision | CaseNotGenerated | GenerationInProgress | InvalidVerdicts | InvalidInput> => {
  const stage = c.stage
  if (stage._tag === "Draft") return Result.fail(new CaseNotGenerated({ case_id: c.id }))
  if (stage._tag === "Generating") return Result.fail(new GenerationInProgress({ case_id: c.id }))
  if (input.review.reference.length > limits.reviewReference) {
    return Result.fail(tooLong("review.reference", limits.reviewReference))
  }
  if (input.review.notes.length > limits.reviewNotes) return Result.fail(tooLong("review.notes", limits.reviewNotes))
  return Result.andThen(atRevision(c, input.revision), () =>
    Result.map(checkVerdicts(c, stage.responses, input.review.verdicts, input.confirm), () => {
      const review = input.confirm
        ? Review.cases.Confirmed.make({ ...input.review, confirmed_at: now })
        : Review.cases.DraftReview.make({ ...input.review, saved_at: now })
      return next(c, {
        stage: Stage.cases.Generated.make({ ...stage, review, revealed_at: stage.revealed_at ?? (input.confirm ? now : null) })
      }, now)
    }))
}

/** The review state, as the summary and the case detail name it. */
export const reviewState = (c: HumanCase): "none" | "draft" | "confirmed" =>
  c.stage._tag !== "Generated"
    ? "none"
    : c.stage.review._tag === "Confirmed"
    ? "confirmed"
    : c.stage.review._tag === "DraftReview"
    ? "draft"
    : "none"

/** Pending: not (yet, or any more) confirmed. */
export const isPending = (c: HumanCase): boolean => reviewState(c) !== "confirmed"

/** Blind labels "A", "B", … given to candidates in the order of `shuffled` (a permutation of their indices). */
export const slotsFor = (
  candidates: ReadonlyArray<Pick<Candidate, "id" | "name" | "platform" | "model_name">>,
  responseIds: ReadonlyArray<ResponseId>,
  shuffled: ReadonlyArray<number>
): ReadonlyArray<Slot> =>
  shuffled.map((index, position) => {
    const candidate = candidates[index]!
    return {
      response_id: responseIds[position]!,
      candidate_id: candidate.id,
      label: String.fromCharCode(65 + position),
      candidate_name: candidate.name,
      platform: candidate.platform,
      model_name: candidate.model_name
    }
  })

/**
 * What a creation request asked for, canonically: a retry with the same id is the same request
 * exactly when its key is equal (later config saves do not change the key).
 */
export const creationKey = (input: CreateInput & { readonly attachment_ids?: ReadonlyArray<string> | undefined }): string =>
  JSON.stringify([
    input.input,
    input.context ?? "",
    input.prompt_override ?? null,
    [...new Set(input.attachment_ids ?? [])].sort()
  ])

/** The base prompt of a human leaderboard: its challenge's system prompt ("" when none). */
export const basePromptOf = (challenge: { readonly system_prompt: string | null }): string => challenge.system_prompt ?? ""

/**
 * What a draft is generated under: the base prompt and each candidate's calling configuration.
 * Equal strings mean the same configuration; any change (a candidate added, removed or replaced, a
 * new base prompt) makes generating an older draft a 409.
 */
export const configurationOf = (
  basePrompt: string,
  candidates: ReadonlyArray<
    { readonly id: string } & Pick<Candidate, "platform" | "model_name" | "url" | "model_id" | "auth_type" | "auth_header_name">
  >
): string =>
  JSON.stringify({
    base_prompt: basePrompt,
    candidates: [...candidates].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((c) => [
      c.id,
      c.platform,
      c.model_name,
      c.url,
      c.model_id,
      c.auth_type,
      c.auth_header_name
    ])
  })

/**
 * The chat every candidate of a case gets: the case's prompt as the system message (none when
 * empty), then one user message with each attached document's text, the context, and the input.
 */
export const generationMessages = (
  c: Pick<HumanCase, "prompt" | "context" | "input">,
  documents: ReadonlyArray<{ readonly name: string; readonly text: string }>
): ReadonlyArray<{ readonly role: "system" | "user"; readonly content: string }> => {
  const parts = [
    ...documents.map((d) => `Document: ${d.name}\n${d.text}`),
    ...(c.context === "" ? [] : [`Context:\n${c.context}`]),
    c.input
  ]
  return [
    ...(c.prompt === "" ? [] : [{ role: "system" as const, content: c.prompt }]),
    { role: "user" as const, content: parts.join("\n\n") }
  ]
}

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
