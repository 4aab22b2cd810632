import { Effect, Schema } from "effect"
import type * as Human from "@podium/domain/human"
import { apiError, ErrorClass, type ErrorAnswers, PayloadTooLarge } from "../api/Errors.ts"

// The HTTP errors of human evaluation: cases, their revisions and reviews, and documents.

const CaseDetails = Schema.Struct({ case_id: Schema.String })

export class InvalidVerdicts extends ErrorClass<InvalidVerdicts>()(
  "InvalidVerdicts",
  400,
  "invalid_verdicts",
  Schema.Struct({ response_ids: Schema.Array(Schema.String) })
) {}
export class InvalidDocument extends ErrorClass<InvalidDocument>()(
  "InvalidDocument",
  400,
  "invalid_document",
  Schema.Struct({ name: Schema.String, reason: Schema.String })
) {}
export class StaleRevision extends ErrorClass<StaleRevision>()(
  "StaleRevision",
  409,
  "stale_revision",
  Schema.Struct({ revision: Schema.Int, current_revision: Schema.Int })
) {}
export class ImmutableCase extends ErrorClass<ImmutableCase>()("ImmutableCase", 409, "immutable_case", CaseDetails) {}
export class GenerationInProgress extends ErrorClass<GenerationInProgress>()(
  "GenerationInProgress",
  409,
  "generation_in_progress",
  CaseDetails
) {}
export class ConfigurationChanged extends ErrorClass<ConfigurationChanged>()(
  "ConfigurationChanged",
  409,
  "configuration_changed",
  CaseDetails
) {}
export class CaseNotGenerated extends ErrorClass<CaseNotGenerated>()("CaseNotGenerated", 409, "case_not_generated", CaseDetails) {}
export class WrongEvalType extends ErrorClass<WrongEvalType>()(
  "WrongEvalType",
  409,
  "wrong_eval_type",
  Schema.Struct({ eval_type: Schema.String })
) {}
export class InvalidCandidateCount extends ErrorClass<InvalidCandidateCount>()(
  "InvalidCandidateCount",
  409,
  "invalid_candidate_count",
  Schema.Struct({ count: Schema.Int })
) {}
export class IdReused extends ErrorClass<IdReused>()("IdReused", 409, "id_reused", Schema.Struct({ id: Schema.String })) {}

/** Human evaluation's domain errors as contract errors; `ResponseRefused` is the generation workflow's, which fails the case instead. */
export const humanErrors = {
  StaleRevision: (e) =>
    Effect.fail(apiError(StaleRevision, `The case is at revision ${e.current_revision}, not ${e.revision}`, {
      revision: e.revision,
      current_revision: e.current_revision
    })),
  ImmutableCase: (e) =>
    Effect.fail(apiError(ImmutableCase, "The case is generated and cannot change: create a new case to re-evaluate", {
      case_id: e.case_id
    })),
  GenerationInProgress: (e) =>
    Effect.fail(apiError(GenerationInProgress, "The case is being generated: poll it until it is done", {
      case_id: e.case_id
    })),
  ConfigurationChanged: (e) =>
    Effect.fail(apiError(ConfigurationChanged,
      "The leaderboard's candidates or base prompt changed since this draft: create a new case", { case_id: e.case_id })),
  CaseNotGenerated: (e) =>
    Effect.fail(apiError(CaseNotGenerated, "The case has no responses to review yet: generate it first", {
      case_id: e.case_id
    })),
  InvalidVerdicts: (e) => Effect.fail(apiError(InvalidVerdicts, e.message, { response_ids: e.response_ids })),
  WrongEvalType: (e) =>
    Effect.fail(apiError(WrongEvalType, `Human evaluation needs eval_type human; this leaderboard's is ${e.eval_type}`, {
      eval_type: e.eval_type
    })),
  InvalidCandidateCount: (e) =>
    Effect.fail(apiError(InvalidCandidateCount,
      `Human evaluation needs 2 to 8 candidates; this leaderboard has ${e.count}`, { count: e.count })),
  IdReused: (e) => Effect.fail(apiError(IdReused, e.message, { id: e.id })),
  DocumentLimitExceeded: (e) => Effect.fail(apiError(PayloadTooLarge, e.message, { limit: e.limit })),
  UnsupportedDocument: (e) =>
    Effect.fail(apiError(InvalidDocument, `${e.name}: ${e.reason}`, { name: e.name, reason: e.reason }))
} satisfies ErrorAnswers<typeof Human, "ResponseRefused">
