import { Context, DateTime, Effect, Layer, Option, Random } from "effect"
import { type Candidate, type LeaderboardId, LeaderboardRepository } from "../leaderboards/index.ts"
import { InvalidInput, NotFound, IdGenerator } from "../shared/index.ts"
import {
  basePromptOf,
  type CaseResponse,
  claim,
  configurationOf,
  createCase,
  type ExportRow,
  exportRow,
  type HumanCase,
  type ReviewInput,
  saveConfig,
  saveReview,
  slotsFor
} from "./HumanCase.ts"
import { type CaseId, type DocumentId, type DocumentScope, limits, type ResponseId } from "./HumanEval.ts"
import {
  type CaseNotGenerated,
  type ConfigurationChanged,
  type DocumentLimitExceeded,
  GenerationInProgress,
  IdReused,
  ImmutableCase,
  InvalidCandidateCount,
  type InvalidVerdicts,
  StaleRevision,
  WrongEvalType
} from "./HumanEvalErrors.ts"
import { fromTallies, type Ranking, winner } from "./HumanRanking.ts"
import { type Principal, visibleMembership } from "../access/index.ts"
import type { UnsupportedDocument } from "./DocumentErrors.ts"
import { attachmentOf, checkCaseDocuments, checkDocument, HumanDocument, sameUpload } from "./HumanDocument.ts"
import { CaseGeneration } from "./CaseGeneration.ts"
import { DocumentReader } from "./DocumentReader.ts"
import { HumanDocumentRepository } from "./HumanDocumentRepository.ts"
import {
  type CaseCounts,
  type CaseListItem,
  HumanCaseRepository,
  type ReviewHistoryEntry
} from "./HumanCaseRepository.ts"

export interface CaseCreate {
  readonly id: CaseId
  readonly input: string
  readonly context?: string | undefined
  readonly prompt_override?: string | null | undefined
  readonly attachment_ids?: ReadonlyArray<string> | undefined
}

export interface DocumentUpload {
  readonly id: DocumentId
  readonly name: string
  readonly scope: DocumentScope
  /** The decoded bytes. */
  readonly data: Uint8Array
}

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

export interface Summary extends CaseCounts {
  readonly default_prompt: string
  readonly cohort: ReadonlyArray<Pick<Candidate, "id" | "name" | "platform" | "model_name">>
  readonly candidate_count: number
  readonly ranking: Ranking
  readonly cases: ReadonlyArray<CaseListItem>
  readonly next_offset: number | null
}

type Access = NotFound | WrongEvalType | InvalidCandidateCount

/**
 * Human evaluation of a leaderboard's candidates (spec part 4): signed-in members only, on
 * leaderboards whose eval_type is `human` and that have 2 to 8 candidates (the production
 * candidates, every one of which answers each case).
 */
export class HumanEvaluation extends Context.Service<HumanEvaluation, {
  readonly createCase: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    input: CaseCreate
  ) => Effect.Effect<
    { readonly detail: CaseDetail; readonly created: boolean },
    Access | InvalidInput | IdReused | DocumentLimitExceeded
  >
  readonly getCase: (principal: Principal, leaderboardId: LeaderboardId, id: CaseId) => Effect.Effect<CaseDetail, Access>
  readonly saveConfig: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    id: CaseId,
    input: { readonly revision: number; readonly prompt_override: string | null }
  ) => Effect.Effect<CaseDetail, Access | StaleRevision | ImmutableCase | GenerationInProgress | InvalidInput>
  readonly generate: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    id: CaseId
  ) => Effect.Effect<CaseDetail, Access | ConfigurationChanged | GenerationInProgress | ImmutableCase>
  readonly saveReview: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    id: CaseId,
    input: { readonly revision: number; readonly confirm: boolean; readonly review: ReviewInput }
  ) => Effect.Effect<
    CaseDetail,
    Access | StaleRevision | CaseNotGenerated | GenerationInProgress | ImmutableCase | InvalidVerdicts | InvalidInput
  >
  readonly summary: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    offset: number
  ) => Effect.Effect<Summary, Access>
  readonly uploadDocument: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    upload: DocumentUpload
  ) => Effect.Effect<
    { readonly document: HumanDocument; readonly created: boolean },
    Access | UnsupportedDocument | DocumentLimitExceeded | IdReused
  >
  readonly sharedDocuments: (principal: Principal, leaderboardId: LeaderboardId) => Effect.Effect<ReadonlyArray<HumanDocument>, Access>
  /** Archives a shared document for future cases; the drafts that carry it keep it. */
  readonly archiveDocument: (
    principal: Principal,
    leaderboardId: LeaderboardId,
    id: DocumentId
  ) => Effect.Effect<HumanDocument, Access>
  /** Reference rows of the confirmed cases, across configurations (spec: `GET H/export`). */
  readonly exportRows: (
    principal: Principal,
    leaderboardId: LeaderboardId
  ) => Effect.Effect<ReadonlyArray<ExportRow & { readonly current: boolean }>, Access>
}>()("@podium/domain/human/HumanEvaluation") {
  static readonly layer = Layer.effect(
    HumanEvaluation,
    Effect.gen(function*() {
      const leaderboards = yield* LeaderboardRepository
      const cases = yield* HumanCaseRepository
      const ids = yield* IdGenerator
      const generation = yield* CaseGeneration
      const documents = yield* HumanDocumentRepository
      const reader = yield* DocumentReader

      /** The leaderboard, if the caller is a member of its workspace and it is fit for human evaluation. */
      const open = Effect.fnUntraced(function*(principal: Principal, leaderboardId: LeaderboardId) {
        const found = yield* leaderboards.findServing(leaderboardId)
        if (Option.isNone(found) || visibleMembership(principal, found.value.leaderboard.workspace_id) === undefined) {
          return yield* new NotFound({ resource: "leaderboard", id: leaderboardId })
        }
        const serving = found.value
        const evalType = serving.leaderboard.challenge.eval_type
        if (evalType !== "human") return yield* new WrongEvalType({ leaderboard_id: leaderboardId, eval_type: evalType })
        const count = serving.candidates.length
        if (count < limits.minCandidates || count > limits.maxCandidates) {
          return yield* new InvalidCandidateCount({ leaderboard_id: leaderboardId, count })
        }
        const basePrompt = basePromptOf(serving.leaderboard.challenge)
        return { serving, basePrompt, configuration: configurationOf(basePrompt, serving.candidates) }
      })

      const stored = Effect.fnUntraced(function*(leaderboardId: LeaderboardId, id: CaseId) {
        const found = yield* cases.find(leaderboardId, id)
        if (Option.isNone(found)) return yield* new NotFound({ resource: "case", id })
        return found.value
      })

      const detail = Effect.fnUntraced(function*(c: HumanCase, configuration: string) {
        const stage = c.stage
        return {
          case: c,
          responses: stage._tag === "Generated" ? stage.responses : stage._tag === "Generating" ? yield* cases.responses(c) : [],
          response_total: stage._tag === "Generated" ? stage.responses.length : stage._tag === "Generating" ? stage.slots.length : 0,
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
        Effect.gen(function*() {
          const now = yield* stored(leaderboardId, c.id)
          if (now.stage._tag === "Generating") return yield* new GenerationInProgress({ case_id: c.id })
          if (now.stage._tag === "Generated" && c.stage._tag !== "Generated") return yield* new ImmutableCase({ case_id: c.id })
          return yield* new StaleRevision({ case_id: c.id, revision, current_revision: now.revision })
        })

      /** The common rows' winner is what `ranking_winner` serves: recorded whenever a review changes. */
      const recordWinner = (leaderboardId: LeaderboardId, configuration: string, candidates: ReadonlyArray<Candidate>) =>
        Effect.flatMap(
          cases.tallies(leaderboardId, configuration, candidates.map((c) => c.id)),
          (tallies) => leaderboards.setRankingWinner(leaderboardId, winner(fromTallies(candidates, tallies)))
        )

      const createCaseFn = Effect.fn("HumanEvaluation.createCase")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        input: CaseCreate
      ) {
        const { basePrompt, configuration, serving } = yield* open(principal, leaderboardId)
        const own: Array<HumanDocument> = []
        for (const [index, id] of [...new Set(input.attachment_ids ?? [])].entries()) {
          const found = yield* documents.find(leaderboardId, id as DocumentId)
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

      const getCase = Effect.fn("HumanEvaluation.getCase")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        id: CaseId
      ) {
        const { configuration } = yield* open(principal, leaderboardId)
        return yield* detail(yield* stored(leaderboardId, id), configuration)
      })

      const saveConfigFn = Effect.fn("HumanEvaluation.saveConfig")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        id: CaseId,
        input: { readonly revision: number; readonly prompt_override: string | null }
      ) {
        const { basePrompt, configuration } = yield* open(principal, leaderboardId)
        const c = yield* stored(leaderboardId, id)
        const next = yield* Effect.fromResult(saveConfig(c, { ...input, basePrompt }, yield* DateTime.now))
        if (!(yield* cases.update(next))) return yield* lost(leaderboardId, c, input.revision)
        return yield* detail(next, configuration)
      })

      const generate = Effect.fn("HumanEvaluation.generate")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        id: CaseId
      ) {
        const { configuration, serving } = yield* open(principal, leaderboardId)
        const c = yield* stored(leaderboardId, id)
        const responseIds = yield* Effect.forEach(serving.candidates, () => ids.next as Effect.Effect<ResponseId>)
        const order = yield* Random.shuffle(serving.candidates.map((_, i) => i))
        const claimId = yield* ids.next
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

      const saveReviewFn = Effect.fn("HumanEvaluation.saveReview")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        id: CaseId,
        input: { readonly revision: number; readonly confirm: boolean; readonly review: ReviewInput }
      ) {
        const { configuration, serving } = yield* open(principal, leaderboardId)
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
        if (!(yield* cases.update(next, entry))) return yield* lost(leaderboardId, c, input.revision)
        yield* recordWinner(leaderboardId, configuration, serving.candidates)
        return yield* detail(next, configuration)
      })

      const summary = Effect.fn("HumanEvaluation.summary")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        offset: number
      ) {
        const { basePrompt, configuration, serving } = yield* open(principal, leaderboardId)
        const candidates = serving.candidates
        const [counts, page, tallies] = yield* Effect.all([
          cases.counts(leaderboardId, configuration),
          cases.page(leaderboardId, configuration, { offset, limit: limits.summaryPage }),
          cases.tallies(leaderboardId, configuration, candidates.map((c) => c.id))
        ], { concurrency: "unbounded" })
        return {
          ...counts,
          default_prompt: basePrompt,
          cohort: candidates.map(({ id, model_name, name, platform }) => ({ id, name, platform, model_name })),
          candidate_count: candidates.length,
          ranking: fromTallies(candidates, tallies),
          cases: page,
          next_offset: offset + page.length < counts.total ? offset + page.length : null
        } satisfies Summary
      })

      const uploadDocument = Effect.fn("HumanEvaluation.uploadDocument")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        upload: DocumentUpload
      ) {
        const { serving } = yield* open(principal, leaderboardId)
        yield* Effect.fromResult(checkDocument(upload.data.length, 0))
        const read = yield* reader.read(upload.name, upload.data)
        yield* Effect.fromResult(checkDocument(upload.data.length, read.text.length))
        const document = new HumanDocument({
          id: upload.id,
          leaderboard_id: leaderboardId,
          workspace_id: serving.leaderboard.workspace_id,
          name: upload.name,
          scope: upload.scope,
          media_type: read.media_type,
          size_bytes: upload.data.length,
          sha256: read.sha256,
          text_chars: read.text.length,
          created_at: yield* DateTime.now,
          archived_at: null
        })
        if (upload.scope === "shared") {
          // every new case carries all active shared documents: they must fit one case together
          yield* Effect.fromResult(checkCaseDocuments([...yield* documents.shared(leaderboardId), document]))
        }
        const inserted = yield* documents.insert(document, upload.data, read.text)
        if (inserted._tag === "Inserted") return { document, created: true }
        const existing = inserted.existing
        if (Option.isSome(existing) && existing.value.archived_at === null && sameUpload(existing.value, document)) {
          return { document: existing.value, created: false }
        }
        return yield* new IdReused({
          id: upload.id,
          message: Option.isNone(existing)
            ? "This id is already used: use a fresh UUID for a new document"
            : existing.value.archived_at !== null
            ? "This id belongs to an archived document and cannot be reused"
            : "A document with this id exists with other content: use a fresh UUID for a new document"
        })
      })

      const sharedDocuments = Effect.fn("HumanEvaluation.sharedDocuments")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId
      ) {
        yield* open(principal, leaderboardId)
        return yield* documents.shared(leaderboardId)
      })

      const archiveDocument = Effect.fn("HumanEvaluation.archiveDocument")(function*(
        principal: Principal,
        leaderboardId: LeaderboardId,
        id: DocumentId
      ) {
        yield* open(principal, leaderboardId)
        const archived = yield* documents.archive(leaderboardId, id, yield* DateTime.now)
        if (Option.isNone(archived)) return yield* new NotFound({ resource: "shared document", id })
        return archived.value
      })

      const exportRows = Effect.fn("HumanEvaluation.exportRows")(function*(principal: Principal, leaderboardId: LeaderboardId) {
        const { configuration } = yield* open(principal, leaderboardId)
        return (yield* cases.confirmed(leaderboardId)).flatMap((c) => {
          const row = exportRow(c)
          return row === undefined ? [] : [{ ...row, current: row.configuration === configuration }]
        })
      })

      return HumanEvaluation.of({
        uploadDocument,
        sharedDocuments,
        archiveDocument,
        exportRows,
        createCase: createCaseFn,
        getCase,
        saveConfig: saveConfigFn,
        generate,
        saveReview: saveReviewFn,
        summary
      })
    })
  )
}
