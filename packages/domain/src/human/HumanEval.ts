import { Schema } from "effect"
import { Uuid } from "../shared/index.ts"

/** The shared vocabulary of human evaluation: ids, verdicts, document scopes and the limits. */

/** Client-generated (any valid UUID), distinct from every document id. */
export const CaseId = Uuid.pipe(Schema.brand("CaseId"))
export type CaseId = typeof CaseId.Type

/** Client-generated (any valid UUID), distinct from every case id. */
export const DocumentId = Uuid.pipe(Schema.brand("DocumentId"))
export type DocumentId = typeof DocumentId.Type

/** Server-generated (UUIDv7): what reviews key their verdicts on while responses are blind. */
/** A claim on a case's generation: the workflow's key, so one claim generates once. */
export const ClaimId = Uuid.pipe(Schema.brand("ClaimId"))
export type ClaimId = typeof ClaimId.Type

export const ResponseId = Uuid.pipe(Schema.brand("ResponseId"))
export type ResponseId = typeof ResponseId.Type

export const Verdict = Schema.Literals(["correct", "incorrect", "abstain"])
export type Verdict = typeof Verdict.Type

export const DocumentScope = Schema.Literals(["case", "shared"])
export type DocumentScope = typeof DocumentScope.Type

export const ResponseStatus = Schema.Literals(["succeeded", "failed"])
export type ResponseStatus = typeof ResponseStatus.Type

/** Part 8 of the spec, and the numbers it leaves to us (documented in the README and OpenAPI). */
export const limits = {
  /** Input, context and prompt, each, in characters. */
  caseText: 32_000,
  reviewReference: 32_000,
  reviewNotes: 8_000,
  reviewHistory: 100,
  summaryPage: 50,
  minCandidates: 2,
  maxCandidates: 8,
  /** One uploaded document, decoded. */
  documentBytes: 10 * 1024 * 1024,
  /** Text extracted from one document, in characters. */
  documentText: 200_000,
  /** Text of every document a case carries (its own and the shared ones), in characters. */
  caseDocumentText: 400_000
} as const
