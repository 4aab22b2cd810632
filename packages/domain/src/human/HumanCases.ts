import { Context, DateTime, Effect, Layer, Option, Random } from "effect"
import { actorOf, type LeaderboardId, ServingEntryId } from "../leaderboards/index.ts"
import { IdGenerator, InvalidInput, NotFound } from "../shared/index.ts"
import type { Principal } from "../access/index.ts"
import { type CaseId, ClaimId, type DocumentId, limits, ResponseId } from "./HumanEval.ts"
import {
  type CaseNotGenerated,
  type ConfigurationChanged,
  type DocumentLimitExceeded,
  GenerationInProgress,
  IdReused,
  ImmutableCase,
  type InvalidVerdicts,
  StaleRevision
} from "./HumanEvalErrors.ts"
import { type ReviewInput, Stage } from "./CaseStage.ts"
import { createCase, type HumanCase, slotsFor } from "./HumanCase.ts"
import { claim, saveConfig, saveReview } from "./CaseLifecycle.ts"
import type { CaseDetail } from "./ReviewerView.ts"
import { attachmentOf, checkCaseDocuments, type HumanDocument } from "./HumanDocument.ts"
import { HumanAccess, type HumanAccessError } from "./HumanAccess.ts"
import { CaseGeneration } from "./CaseGeneration.ts"
import { HumanDocumentRepository } from "./HumanDocumentRepository.ts"
import { HumanCaseRepository, type ReviewHistoryEntry } from "./HumanCaseRepository.ts"

export interface CaseCreate {
  readonly id: CaseId
  readonly input: string
  readonly context?: string | undefined
  readonly prompt_override?: string | null | undefined
  readonly attachment_ids?: ReadonlyArray<DocumentId> | undefined
}

/**
 * A reviewer's work on cases (spec part 4): write a draft, configure it, generate the candidates'
 * answers, review them. Every method first opens the leaderboard (HumanAccess).
 */
export class HumanCases extends Context.Service<HumanCases, {
  readonly create: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    input: CaseCreate
  ) => Effect.Effect<
    { readonly detail: CaseDetail; readonly created: boolean },
    HumanAccessError | InvalidInput | IdReused | DocumentLimitExceeded
  >
  readonly get: (principal: Principal, leaderboardId: LeaderboardId, id: CaseId) => Effect.Effect<CaseDetail, HumanAccessError>
  readonly saveConfig: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    id: CaseId,
    input: { readonly revision: number; readonly prompt_override: string | null }
  ) => Effect.Effect<CaseDetail, HumanAccessError | StaleRevision | ImmutableCase | GenerationInProgress | InvalidInput>
  readonly generate: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    id: CaseId
  ) => Effect.Effect<CaseDetail, HumanAccessError | ConfigurationChanged | GenerationInProgress | ImmutableCase>
  readonly saveReview: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    id: CaseId,
    input: { readonly revision: number; readonly confirm: boolean; readonly review: ReviewInput }
  ) => Effect.Effect<
    CaseDetail,
    HumanAccessError | StaleRevision | CaseNotGenerated | GenerationInProgress | ImmutableCase | InvalidVerdicts | InvalidInput
  >
}>()("@podium/domain/human/HumanCases") {
  static readonly layer = Layer.effect(
    HumanCases,
    Effect.gen(function*() {
      const access = yield* HumanAccess
      const cases = yield* HumanCaseRepository
      const documents = yield* HumanDocumentRepository
      const generation = yield* CaseGeneration
      const ids = yield* IdGenerator

      const stored = Effect.fnUntraced(function*(leaderboardId: LeaderboardId, id: CaseId) {
        const found = yield* cases.find(leaderboardId, id)
        if (Option.isNone(found)) return yield* new NotFound({ resource: "case", id })
        return found.value
      })

      const detail = Effect.fnUntraced(function*(c: HumanCase, configuration: string) {
        const progress = yield* Stage.match(c.stage, {
          Draft: () => Effect.succeed({ responses: [], response_total: 0 }),
          Generating: (s) => Effect.map(cases.responses(c), (responses) => ({ responses, response_total: s.slots.length })),
          Generated: (s) => Effect.succeed({ responses: s.responses, response_total: s.responses.length })
        })
        return {
          case: c,
          ...progress,
          history: yield* cases.history(c, limits.reviewHistory),
          current: c.configuration === configuration
        } satisfies CaseDetail
      })

      /** A conditional write lost to someone else's: what the case is now decides the answer. */
      const lost = (
        leaderboardId: LeaderboardId,
        c: HumanCase,
        revision: number
      ): Effect.Effect<never, NotFound | GenerationInProgress | ImmutableCase | StaleRevision> =>
        Effect.flatMap(stored(leaderboardId, c.id), (now) => {
          const stale = new StaleRevision({ case_id: c.id, revision, current_revision: now.revision })
          return Effect.fail(Stage.match(now.stage, {
            Draft: () => stale,
            Generating: () => new GenerationInProgress({ case_id: c.id }),
            Generated: () => (c.stage._tag === "Generated" ? stale : new ImmutableCase({ case_id: c.id }))
          }))
        })

      const create = Effect.fn("HumanCases.create")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        input: CaseCreate
      ) {
        const { basePrompt, configuration, serving } = yield* access.open(principal, leaderboardId)
        const own: Array<HumanDocument> = []
        for (const [index, id] of [...new Set(input.attachment_ids ?? [])].entries()) {
          const found = yield* documents.find(leaderboardId, id)
          if (Option.isNone(found) || found.value.scope !== "case") {
            return yield* new InvalidInput({
              message: `${id} is not a case document of this leaderboard`,
              path: ["attachment_ids", index]
            })
          }
          own.push(found.value)
        }
        // active shared documents are snapshotted into the draft
        const attachments = [...own, ...yield* documents.shared(leaderboardId)].map(attachmentOf)
        yield* Effect.fromResult(checkCaseDocuments(attachments))
        const draft = yield* Effect.fromResult(createCase({
          ...input,
          leaderboardId,
          workspaceId: serving.leaderboard.workspace_id,
          basePrompt,
          attachments,
          configuration,
          now: yield* DateTime.now
        }))
        const inserted = yield* cases.insert(draft)
        if (inserted._tag === "Inserted") return { detail: yield* detail(draft, configuration), created: true }
        const existing = inserted.existing
        if (Option.isSome(existing) && existing.value.creation_key === draft.creation_key) {
          return { detail: yield* detail(existing.value, configuration), created: false }
        }
        return yield* new IdReused({
          id: input.id,
          message: Option.isSome(existing)
            ? "A case with this id exists with a different payload: use a fresh UUID for a new case"
            : "This id is already used: use a fresh UUID for a new case"
        })
      })

      const get = Effect.fn("HumanCases.get")(function*(principal: Principal, leaderboardId: LeaderboardId, id: CaseId) {
        const { configuration } = yield* access.open(principal, leaderboardId)
        return yield* detail(yield* stored(leaderboardId, id), configuration)
      })

      const saveConfigFn = Effect.fn("HumanCases.saveConfig")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        id: CaseId,
        input: { readonly revision: number; readonly prompt_override: string | null }
      ) {
        const { basePrompt, configuration } = yield* access.open(principal, leaderboardId)
        const c = yield* stored(leaderboardId, id)
        const next = yield* Effect.fromResult(saveConfig(c, { ...input, basePrompt }, yield* DateTime.now))
        if (!(yield* cases.update(next))) return yield* lost(leaderboardId, c, input.revision)
        return yield* detail(next, configuration)
      })

      const generate = Effect.fn("HumanCases.generate")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        id: CaseId
      ) {
        const { configuration, serving } = yield* access.open(principal, leaderboardId)
        const c = yield* stored(leaderboardId, id)
        const responseIds = yield* Effect.forEach(serving.candidates, () => ids.make(ResponseId))
        const order = yield* Random.shuffle(serving.candidates.map((_, i) => i))
        const claimId = yield* ids.make(ClaimId)
        const claimed = yield* Effect.fromResult(claim(c, {
          configuration,
          claimId,
          slots: slotsFor(serving.candidates, responseIds, order)
        }, yield* DateTime.now))
        if (!(yield* cases.update(claimed))) {
          // someone else moved the draft first: most likely another generate
          return yield* lost(leaderboardId, c, c.revision).pipe(
            Effect.catchTag("StaleRevision", () => Effect.fail(new GenerationInProgress({ case_id: id })))
          )
        }
        // Durable from here: a crash or a client hanging up does not lose the paid calls.
        yield* generation.run({ leaderboard_id: leaderboardId, case_id: id, claim_id: claimId })
        return yield* detail(yield* stored(leaderboardId, id), configuration)
      })

      const saveReviewFn = Effect.fn("HumanCases.saveReview")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        id: CaseId,
        input: { readonly revision: number; readonly confirm: boolean; readonly review: ReviewInput }
      ) {
        const { configuration, serving } = yield* access.open(principal, leaderboardId)
        const c = yield* stored(leaderboardId, id)
        const now = yield* DateTime.now
        const next = yield* Effect.fromResult(saveReview(c, input, now))
        const entry: ReviewHistoryEntry = {
          revision: next.revision,
          confirmed: input.confirm,
          review: input.review,
          saved_by: principal._tag === "SessionPrincipal" ? principal.user.id : null,
          saved_at: now
        }
        // the serving-history entry, if the review changes the ranking's winner
        const servingEntry = { id: yield* ids.make(ServingEntryId), at: now, actor: actorOf(principal) }
        const saved = yield* cases.saveReview(next, entry, { configuration, candidates: serving.candidates }, servingEntry)
        if (!saved) return yield* lost(leaderboardId, c, input.revision)
        return yield* detail(next, configuration)
      })

      return HumanCases.of({ create, get, saveConfig: saveConfigFn, generate, saveReview: saveReviewFn })
    })
  )
}
