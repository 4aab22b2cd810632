import { type DateTime, Result } from "effect"
import { InvalidInput } from "../shared/index.ts"
import { limits } from "./HumanEval.ts"
import {
  CaseNotGenerated,
  ConfigurationChanged,
  GenerationInProgress,
  ImmutableCase,
  InvalidVerdicts,
  StaleRevision
} from "./HumanEvalErrors.ts"
import { type CaseResponse, Review, type ReviewInput, type Slot, Stage, type Verdicts } from "./CaseStage.ts"
import { checkLength, HumanCase } from "./HumanCase.ts"

/**
 * The case's transitions (spec part 3). Each is a pure function `(case, input, now) =>
 * Result<case, error>` and increments `revision`; a stale revision is refused. Only drafts take a
 * new configuration; a generated case changes only by its review.
 */

const next = (c: HumanCase, changes: Partial<HumanCase>, now: DateTime.Utc) =>
  new HumanCase({ ...c, ...changes, revision: c.revision + 1, updated_at: now })

const atRevision = (c: HumanCase, revision: number): Result.Result<void, StaleRevision> =>
  revision === c.revision
    ? Result.void
    : Result.fail(new StaleRevision({ case_id: c.id, revision, current_revision: c.revision }))

/** A draft, else why a case that is not one cannot be configured or generated. */
const asDraft = (c: HumanCase): Result.Result<void, GenerationInProgress | ImmutableCase> =>
  Stage.match(c.stage, {
    Draft: () => Result.void,
    Generating: () => Result.fail(new GenerationInProgress({ case_id: c.id })),
    Generated: () => Result.fail(new ImmutableCase({ case_id: c.id }))
  })

/** PUT config: only a draft, at its current revision; null restores the base prompt. */
export const saveConfig = (
  c: HumanCase,
  input: { readonly revision: number; readonly prompt_override: string | null; readonly basePrompt: string },
  now: DateTime.Utc
): Result.Result<HumanCase, StaleRevision | ImmutableCase | GenerationInProgress | InvalidInput> =>
  asDraft(c).pipe(
    Result.andThen(() => checkLength("prompt_override", input.prompt_override ?? "", limits.caseText)),
    Result.andThen(() => atRevision(c, input.revision)),
    Result.map(() => next(c, { prompt_override: input.prompt_override, prompt: input.prompt_override ?? input.basePrompt }, now))
  )

/**
 * POST generate: a draft whose configuration is still the leaderboard's is claimed, with one slot
 * per candidate. The database holds the same rule (a conditional update), so only one claim wins.
 */
export const claim = (
  c: HumanCase,
  input: { readonly configuration: string; readonly claimId: string; readonly slots: ReadonlyArray<Slot> },
  now: DateTime.Utc
): Result.Result<HumanCase, ConfigurationChanged | GenerationInProgress | ImmutableCase> =>
  asDraft(c).pipe(
    Result.andThen(() =>
      input.configuration === c.configuration ? Result.void : Result.fail(new ConfigurationChanged({ case_id: c.id }))
    ),
    Result.map(() =>
      next(c, {
        stage: Stage.cases.Generating.make({ claim_id: input.claimId, claimed_at: now, slots: [...input.slots] })
      }, now)
    )
  )

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
): Result.Result<HumanCase, StaleRevision | CaseNotGenerated | GenerationInProgress | InvalidVerdicts | InvalidInput> =>
  Stage.match(c.stage, {
    Draft: () => Result.fail(new CaseNotGenerated({ case_id: c.id })),
    Generating: () => Result.fail(new GenerationInProgress({ case_id: c.id })),
    Generated: (stage) =>
      checkLength("review.reference", input.review.reference, limits.reviewReference).pipe(
        Result.andThen(() => checkLength("review.notes", input.review.notes, limits.reviewNotes)),
        Result.andThen(() => atRevision(c, input.revision)),
        Result.andThen(() => checkVerdicts(c, stage.responses, input.review.verdicts, input.confirm)),
        Result.map(() => {
          const review = input.confirm
            ? Review.cases.Confirmed.make({ ...input.review, confirmed_at: now })
            : Review.cases.DraftReview.make({ ...input.review, saved_at: now })
          return next(c, {
            stage: Stage.cases.Generated.make({ ...stage, review, revealed_at: stage.revealed_at ?? (input.confirm ? now : null) })
          }, now)
        })
      )
  })
