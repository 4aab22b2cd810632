import { Schema } from "effect"
import { Scope } from "@podium/domain/access"
import { IntegrationProvider } from "@podium/domain/integrations"

const Message = Schema.String.annotate({ description: "A human sentence" })

/**
 * Every non-2xx response carries `{"error": {"code", "message", "details"?}}`: this is its shape for
 * code that reads any error (test clients). The contract itself has one class per code (below):
 * its schema names the code as a literal (so the OpenAPI document and typed clients tell
 * `stale_revision` from `immutable_case`), its status is its `httpApiStatus`, and `status` and
 * `code` are statics for what answers without an endpoint (the request pipeline).
 */
export const ErrorBody = Schema.Struct({
  code: Schema.String.annotate({ description: "Stable snake_case code, e.g. `validation_failed`" }),
  message: Message,
  details: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
})
export type ErrorBody = typeof ErrorBody.Type

type BodyFields<Code extends string, Details extends Schema.Top> =
  & { readonly code: Schema.Literal<Code>; readonly message: Schema.String }
  & ([Details] extends [never] ? {} : { readonly details: Details })

/** The `error` member of a body with this `code`, and `details` when given (`Schema.optionalKey(...)` if optional). */
export const errorBody = <const Code extends string, Details extends Schema.Top = never>(code: Code, details?: Details) =>
  Schema.Struct({
    code: Schema.Literal(code),
    message: Message,
    ...(details === undefined ? {} : { details })
  } as BodyFields<Code, Details>)

/** `class StaleRevision extends ErrorClass<StaleRevision>()("StaleRevision", 409, "stale_revision", details) {}` */
export const ErrorClass = <Self>() =>
<const Code extends string, const Status extends number, Details extends Schema.Top = never>(
  identifier: string,
  status: Status,
  code: Code,
  details?: Details
) =>
  Object.assign(
    // The identifier on the body too, so the OpenAPI component is `StaleRevision`, not `StaleRevisionEncoded`
    Schema.Class<Self>(identifier)(
      Schema.Struct({ error: errorBody(code, details) }).annotate({ identifier }),
      { httpApiStatus: status }
    ),
    { status, code }
  )

type Details<A> = A extends { readonly error: { readonly details: infer D } } ? [details: D]
  : A extends { readonly error: { readonly details?: infer D } } ? [details?: D]
  : []

/** `apiError(StaleRevision, "…", { revision, current_revision })` builds the error value handlers fail with. */
export const apiError = <A extends { readonly error: { readonly code: string } }>(
  Class: { new(props: { readonly error: A["error"] }): A; readonly code: A["error"]["code"] },
  message: string,
  ...details: Details<A>
): A => {
  const [detail] = details as ReadonlyArray<unknown>
  const error = detail === undefined ? { code: Class.code, message } : { code: Class.code, message, details: detail }
  return new Class({ error: error as A["error"] })
}

const Issues = Schema.Struct({
  issues: Schema.Array(Schema.Struct({
    path: Schema.Array(Schema.Union([Schema.String, Schema.Number])),
    message: Schema.String
  }))
})
const CaseDetails = Schema.Struct({ case_id: Schema.String })

// 400
export class ValidationFailed extends ErrorClass<ValidationFailed>()("ValidationFailed", 400, "validation_failed", Issues) {}
export class InvalidBody extends ErrorClass<InvalidBody>()("InvalidBody", 400, "invalid_body") {}
/** A JSON body whose bytes are not UTF-8 (RFC 8259): refused whole, never stored with U+FFFD in place of them. */
export class InvalidJson extends ErrorClass<InvalidJson>()("InvalidJson", 400, "invalid_json") {}
export class InvalidIntegrationToken extends ErrorClass<InvalidIntegrationToken>()(
  "InvalidIntegrationToken",
  400,
  "invalid_integration_token",
  Schema.Struct({ provider: IntegrationProvider, reason: Schema.String })
) {}
export class StreamingUnsupported extends ErrorClass<StreamingUnsupported>()("StreamingUnsupported", 400, "streaming_unsupported") {}
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
// 401, 403
export class Unauthorized extends ErrorClass<Unauthorized>()("Unauthorized", 401, "unauthorized") {}
export class InsufficientScope extends ErrorClass<InsufficientScope>()(
  "InsufficientScope",
  403,
  "insufficient_scope",
  Schema.Struct({ required_scope: Scope })
) {}
export class Forbidden extends ErrorClass<Forbidden>()("Forbidden", 403, "forbidden") {}
// 404, 405
export class NotFound extends ErrorClass<NotFound>()("NotFound", 404, "not_found") {}
export class DatasetNotFound extends ErrorClass<DatasetNotFound>()("DatasetNotFound", 404, "dataset_not_found") {}
export class MethodNotAllowed extends ErrorClass<MethodNotAllowed>()(
  "MethodNotAllowed",
  405,
  "method_not_allowed",
  Schema.Struct({ allowed: Schema.Array(Schema.String) })
) {}
// 409
export class AlreadyMember extends ErrorClass<AlreadyMember>()("AlreadyMember", 409, "already_member") {}
export class OwnerCannotBeRemoved extends ErrorClass<OwnerCannotBeRemoved>()("OwnerCannotBeRemoved", 409, "owner_cannot_be_removed") {}
export class InviteNotPending extends ErrorClass<InviteNotPending>()(
  "InviteNotPending",
  409,
  "invite_not_pending",
  Schema.Struct({ status: Schema.String })
) {}
export class LeaderboardArchived extends ErrorClass<LeaderboardArchived>()("LeaderboardArchived", 409, "leaderboard_archived") {}
export class NoServingModel extends ErrorClass<NoServingModel>()(
  "NoServingModel",
  409,
  "no_serving_model",
  Schema.Struct({ leaderboard_id: Schema.String })
) {}
export class NoActiveDeployment extends ErrorClass<NoActiveDeployment>()(
  "NoActiveDeployment",
  409,
  "no_active_deployment",
  Schema.Struct({ model_id: Schema.String })
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
export class LeaderboardPaused extends ErrorClass<LeaderboardPaused>()("LeaderboardPaused", 409, "leaderboard_paused") {}
export class CollectionEnded extends ErrorClass<CollectionEnded>()(
  "CollectionEnded",
  409,
  "collection_ended",
  Schema.Struct({ end_date: Schema.String })
) {}
export class NotPushDataset extends ErrorClass<NotPushDataset>()("NotPushDataset", 409, "not_push_dataset") {}
export class NoLabeller extends ErrorClass<NoLabeller>()("NoLabeller", 409, "no_labeller") {}
export class RunInProgress extends ErrorClass<RunInProgress>()(
  "RunInProgress",
  409,
  "run_in_progress",
  Schema.Struct({ run_id: Schema.String })
) {}
export class DatasetMissing extends ErrorClass<DatasetMissing>()("DatasetMissing", 409, "dataset_missing") {}
export class NotRunnable extends ErrorClass<NotRunnable>()("NotRunnable", 409, "not_runnable") {}
export class RunEnded extends ErrorClass<RunEnded>()("RunEnded", 409, "run_ended", Schema.Struct({ status: Schema.String })) {}
export class IdReused extends ErrorClass<IdReused>()("IdReused", 409, "id_reused", Schema.Struct({ id: Schema.String })) {}
const LeaderboardDetails = Schema.Struct({ leaderboard_id: Schema.String })
const ModelDetails = Schema.Struct({ model_id: Schema.String })
export class LeaderboardDatasetMinRowsRequired extends ErrorClass<LeaderboardDatasetMinRowsRequired>()(
  "LeaderboardDatasetMinRowsRequired",
  409,
  "leaderboard_dataset_min_rows_required",
  LeaderboardDetails
) {}
export class LeaderboardRunningAssignmentBlocked extends ErrorClass<LeaderboardRunningAssignmentBlocked>()(
  "LeaderboardRunningAssignmentBlocked",
  409,
  "leaderboard_running_assignment_blocked",
  LeaderboardDetails
) {}
export class NoSuccessfulFineTune extends ErrorClass<NoSuccessfulFineTune>()(
  "NoSuccessfulFineTune",
  409,
  "no_successful_fine_tune",
  ModelDetails
) {}
export class BaseModelUnavailable extends ErrorClass<BaseModelUnavailable>()(
  "BaseModelUnavailable",
  409,
  "base_model_unavailable",
  ModelDetails
) {}
export class FineTuneInProgress extends ErrorClass<FineTuneInProgress>()(
  "FineTuneInProgress",
  409,
  "fine_tune_in_progress",
  Schema.Struct({ run_id: Schema.String })
) {}
export class VersionDeployed extends ErrorClass<VersionDeployed>()(
  "VersionDeployed",
  409,
  "version_deployed",
  Schema.Struct({ version_id: Schema.String, status: Schema.String })
) {}
export class NoTrainingData extends ErrorClass<NoTrainingData>()("NoTrainingData", 409, "no_training_data", ModelDetails) {}
// 413, 415, 429
export class PayloadTooLarge extends ErrorClass<PayloadTooLarge>()(
  "PayloadTooLarge",
  413,
  "payload_too_large",
  Schema.optionalKey(Schema.Struct({ limit: Schema.Finite }))
) {}
export class UnsupportedMediaType extends ErrorClass<UnsupportedMediaType>()("UnsupportedMediaType", 415, "unsupported_media_type") {}
export class BudgetExceeded extends ErrorClass<BudgetExceeded>()(
  "BudgetExceeded",
  429,
  "budget_exceeded",
  Schema.Struct({ budget_limit: Schema.Finite, spent_usd: Schema.Finite, retry_after_seconds: Schema.Finite })
) {}
export class EventLimitExceeded extends ErrorClass<EventLimitExceeded>()(
  "EventLimitExceeded",
  429,
  "event_limit_exceeded",
  Schema.Struct({ retry_after_seconds: Schema.Finite, limits: Schema.Unknown })
) {}
/** The client address sent too many credentials that failed: it waits `retry_after_seconds` (also `Retry-After`). */
export class TooManyFailedAuthentications extends ErrorClass<TooManyFailedAuthentications>()(
  "TooManyFailedAuthentications",
  429,
  "too_many_failed_authentications",
  Schema.Struct({ retry_after_seconds: Schema.Finite })
) {}
// 5xx
export class Internal extends ErrorClass<Internal>()("Internal", 500, "internal") {}
export class UpstreamError extends ErrorClass<UpstreamError>()(
  "UpstreamError",
  502,
  "upstream_error",
  Schema.Union([
    Schema.Struct({ provider: IntegrationProvider }),
    Schema.Struct({ candidate_id: Schema.String, candidate_name: Schema.String, trace_id: Schema.String })
  ])
) {}

/** What every endpoint can answer: the request pipeline's refusals (and `validation_failed` for a use case's invalid input). */
export const requestErrors = [ValidationFailed, InvalidBody, InvalidJson, PayloadTooLarge, Internal] as const
export class RouterIntegrationMissing extends ErrorClass<RouterIntegrationMissing>()(
  "RouterIntegrationMissing",
  409,
  "router_integration_missing",
  Schema.Struct({ business_id: Schema.String })
) {}
