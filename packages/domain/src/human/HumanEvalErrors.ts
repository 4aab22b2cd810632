import { Schema } from "effect"

/** The revision sent is not the case's current one: someone saved in between. */
export class StaleRevision extends Schema.TaggedError<StaleRevision>()("StaleRevision", {
  case_id: Schema.String,
  revision: Schema.Int,
  current_revision: Schema.Int
}) {}

/** Generated cases never change but for their review; re-evaluating needs a new case. */
export class ImmutableCase extends Schema.TaggedError<ImmutableCase>()("ImmutableCase", {
  case_id: Schema.String
}) {}

/** Another request holds the generation claim of this case. */
export class GenerationInProgress extends Schema.TaggedError<GenerationInProgress>()("GenerationInProgress", {
  case_id: Schema.String
}) {}

/** The leaderboard's candidates or base prompt changed since the draft was made. */
export class ConfigurationChanged extends Schema.TaggedError<ConfigurationChanged>()("ConfigurationChanged", {
  case_id: Schema.String
}) {}

/** A review needs responses: the case has not been generated yet. */
export class CaseNotGenerated extends Schema.TaggedError<CaseNotGenerated>()("CaseNotGenerated", {
  case_id: Schema.String
}) {}

/** Verdicts that name an unknown or failed response, or (to confirm) leave a succeeded one out. */
export class InvalidVerdicts extends Schema.TaggedError<InvalidVerdicts>()("InvalidVerdicts", {
  case_id: Schema.String,
  message: Schema.String,
  response_ids: Schema.Array(Schema.String)
}) {}

/** Human evaluation on a leaderboard whose eval_type is not `human`. */
export class WrongEvalType extends Schema.TaggedError<WrongEvalType>()("WrongEvalType", {
  leaderboard_id: Schema.String,
  eval_type: Schema.String
}) {}

/** Human evaluation needs 2 to 8 production candidates. */
export class InvalidCandidateCount extends Schema.TaggedError<InvalidCandidateCount>()("InvalidCandidateCount", {
  leaderboard_id: Schema.String,
  count: Schema.Int
}) {}

/** A client id used before for something else: another payload, another kind, or an archived document. */
export class IdReused extends Schema.TaggedError<IdReused>()("IdReused", {
  id: Schema.String,
  message: Schema.String
}) {}

/** A document, or the documents of a case, over a size limit. */
export class DocumentLimitExceeded extends Schema.TaggedError<DocumentLimitExceeded>()("DocumentLimitExceeded", {
  message: Schema.String,
  limit: Schema.Number
}) {}
