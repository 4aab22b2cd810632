import { Effect } from "effect"
import type {
  Forbidden,
  InsufficientScope,
  Unauthenticated,
  AlreadyMember,
  InviteNotPending,
  BudgetExceeded,
} from "@podium/domain/access"
import type { InvalidInput, NotFound } from "@podium/domain/shared"
import type {
  IntegrationTokenRejected,
  IntegrationUnavailable,
  HubDatasetNotFound,
} from "@podium/domain/integrations"
import type {
  UnsupportedDocument,
  CaseNotGenerated,
  ConfigurationChanged,
  DocumentLimitExceeded,
  GenerationInProgress,
  IdReused,
  ImmutableCase,
  InvalidCandidateCount,
  InvalidVerdicts,
  StaleRevision,
  WrongEvalType,
} from "@podium/domain/human"
import type { NoActiveDeployment, NoServingModel, UpstreamFailed } from "@podium/domain/inference"
import type { CollectionEnded, EventLimitExceeded, PushTooLarge } from "@podium/domain/datasets"
import type { DatasetMissing, NotRunnable, RunEnded, RunInProgress } from "@podium/domain/runs"
import type {
  AssignmentRejected,
  BaseModelUnavailable,
  FineTuneInProgress,
  NoSuccessfulFineTune,
  NoTrainingData,
  VersionDeployed
} from "@podium/domain/models"
import * as ApiErrors from "../api/Errors.ts"
import { apiError } from "../api/Errors.ts"

const requestParts = new Set<unknown>(["payload", "query", "params", "headers"])

/** A use case names the field it refused; the contract's path also names the request part (the payload unless it says). */
const issuePath = (path: ReadonlyArray<string | number>) => requestParts.has(path[0]) ? path : ["payload", ...path]

/** Domain errors are not HTTP errors: this is the one place that decides their status and code. */
export const toApiError = {
  Unauthenticated: (e: Unauthenticated) => Effect.fail(apiError(ApiErrors.Unauthorized, e.message)),
  InsufficientScope: (e: InsufficientScope) =>
    Effect.fail(apiError(ApiErrors.InsufficientScope, `This needs the ${e.required_scope} scope`, {
      required_scope: e.required_scope
    })),
  Forbidden: (e: Forbidden) => Effect.fail(apiError(ApiErrors.Forbidden, e.message)),
  NotFound: (e: NotFound) => Effect.fail(apiError(ApiErrors.NotFound, `No ${e.resource} ${e.id}`)),
  InvalidInput: (e: InvalidInput) =>
    Effect.fail(apiError(ApiErrors.ValidationFailed, e.message, {
      issues: [{ path: issuePath(e.path), message: e.message }]
    })),
  AlreadyMember: (e: AlreadyMember) =>
    Effect.fail(apiError(ApiErrors.AlreadyMember, `${e.email} is already a member of this workspace`)),
  OwnerCannotBeRemoved: () =>
    Effect.fail(apiError(ApiErrors.OwnerCannotBeRemoved, "The owner of a workspace cannot be removed")),
  InviteNotPending: (e: InviteNotPending) =>
    Effect.fail(apiError(ApiErrors.InviteNotPending, `The invite is ${e.status}`, { status: e.status })),
  IntegrationTokenRejected: (e: IntegrationTokenRejected) =>
    Effect.fail(apiError(ApiErrors.InvalidIntegrationToken, `The ${e.provider} rejected the token: ${e.reason}`, {
      provider: e.provider,
      reason: e.reason
    })),
  IntegrationUnavailable: (e: IntegrationUnavailable) =>
    Effect.fail(apiError(ApiErrors.UpstreamError, `The ${e.provider} could not be reached: ${e.reason}`, {
      provider: e.provider
    })),
  LeaderboardArchived: () =>
    Effect.fail(apiError(ApiErrors.LeaderboardArchived, "The leaderboard is archived: set its status to active first")),
  BudgetExceeded: (e: BudgetExceeded) =>
    Effect.fail(apiError(ApiErrors.BudgetExceeded, "The API token's budget is used up until it resets", {
      budget_limit: e.budget_limit,
      spent_usd: e.spent_usd,
      retry_after_seconds: e.retry_after_seconds
    })),
  StreamingUnsupported: () =>
    Effect.fail(apiError(ApiErrors.StreamingUnsupported, "Streaming is not supported: send stream false or leave it out")),
  NoServingModel: (e: NoServingModel) =>
    Effect.fail(apiError(ApiErrors.NoServingModel, "The leaderboard has no model to serve: choose one with PATCH /api/leaderboards/{id} " +
        "{\"chosen_model_strategy\": \"manual\", \"chosen_leaderboard_model_id\": \"<candidate id>\"}, " +
        "or keep ranking_winner and run the leaderboard", {
      leaderboard_id: e.leaderboard_id
    })),
  NoActiveDeployment: (e: NoActiveDeployment) =>
    Effect.fail(apiError(ApiErrors.NoActiveDeployment, "The serving model has no active deployment", {
      model_id: e.model_id
    })),
  UpstreamFailed: (e: UpstreamFailed) =>
    Effect.fail(apiError(ApiErrors.UpstreamError, `Candidate ${e.candidate_name} failed: ${e.reason}`, {
      candidate_id: e.candidate_id,
      candidate_name: e.candidate_name,
      trace_id: e.trace_id
    })),
  StaleRevision: (e: StaleRevision) =>
    Effect.fail(apiError(ApiErrors.StaleRevision, `The case is at revision ${e.current_revision}, not ${e.revision}`, {
      revision: e.revision,
      current_revision: e.current_revision
    })),
  ImmutableCase: (e: ImmutableCase) =>
    Effect.fail(apiError(ApiErrors.ImmutableCase, "The case is generated and cannot change: create a new case to re-evaluate", {
      case_id: e.case_id
    })),
  GenerationInProgress: (e: GenerationInProgress) =>
    Effect.fail(apiError(ApiErrors.GenerationInProgress, "The case is being generated: poll it until it is done", {
      case_id: e.case_id
    })),
  ConfigurationChanged: (e: ConfigurationChanged) =>
    Effect.fail(apiError(ApiErrors.ConfigurationChanged,
      "The leaderboard's candidates or base prompt changed since this draft: create a new case", { case_id: e.case_id })),
  CaseNotGenerated: (e: CaseNotGenerated) =>
    Effect.fail(apiError(ApiErrors.CaseNotGenerated, "The case has no responses to review yet: generate it first", {
      case_id: e.case_id
    })),
  InvalidVerdicts: (e: InvalidVerdicts) =>
    Effect.fail(apiError(ApiErrors.InvalidVerdicts, e.message, { response_ids: e.response_ids })),
  WrongEvalType: (e: WrongEvalType) =>
    Effect.fail(apiError(ApiErrors.WrongEvalType, `Human evaluation needs eval_type human; this leaderboard's is ${e.eval_type}`, {
      eval_type: e.eval_type
    })),
  InvalidCandidateCount: (e: InvalidCandidateCount) =>
    Effect.fail(apiError(ApiErrors.InvalidCandidateCount,
      `Human evaluation needs 2 to 8 candidates; this leaderboard has ${e.count}`, { count: e.count })),
  IdReused: (e: IdReused) => Effect.fail(apiError(ApiErrors.IdReused, e.message, { id: e.id })),
  DocumentLimitExceeded: (e: DocumentLimitExceeded) =>
    Effect.fail(apiError(ApiErrors.PayloadTooLarge, e.message, { limit: e.limit })),
  UnsupportedDocument: (e: UnsupportedDocument) =>
    Effect.fail(apiError(ApiErrors.InvalidDocument, `${e.name}: ${e.reason}`, { name: e.name, reason: e.reason })),
  PushTooLarge: (e: PushTooLarge) => Effect.fail(apiError(ApiErrors.PayloadTooLarge, e.message)),
  NotPushDataset: () =>
    Effect.fail(apiError(ApiErrors.NotPushDataset, "Rows are pushed only to leaderboards whose dataset_type is PUSH")),
  LeaderboardPaused: () =>
    Effect.fail(apiError(ApiErrors.LeaderboardPaused, "The leaderboard is paused: set its status to active to push rows")),
  CollectionEnded: (e: CollectionEnded) =>
    Effect.fail(apiError(ApiErrors.CollectionEnded, `The leaderboard stopped collecting rows at its end_date ${e.end_date}`, {
      end_date: e.end_date
    })),
  EventLimitExceeded: (e: EventLimitExceeded) =>
    Effect.fail(apiError(ApiErrors.EventLimitExceeded, "Every row is over the leaderboard's daily or monthly event limit", {
      retry_after_seconds: e.retry_after_seconds,
      limits: e.limits
    })),
  NoLabeller: () =>
    Effect.fail(apiError(ApiErrors.NoLabeller,
      "Auto-labels need a labeller: set judge_provider and judge_model, or choose a candidate that serves")),
  RunInProgress: (e: RunInProgress) =>
    Effect.fail(apiError(ApiErrors.RunInProgress, `Run ${e.run_id} of this leaderboard has not ended: one run at a time`, {
      run_id: e.run_id
    })),
  DatasetMissing: (e: DatasetMissing) => Effect.fail(apiError(ApiErrors.DatasetMissing, `No usable dataset: ${e.message}`)),
  NotRunnable: (e: NotRunnable) => Effect.fail(apiError(ApiErrors.NotRunnable, e.message)),
  RunEnded: (e: RunEnded) =>
    Effect.fail(apiError(ApiErrors.RunEnded, `The run has ended (${e.status})`, { status: e.status })),
  HubDatasetNotFound: (e: HubDatasetNotFound) =>
    Effect.fail(apiError(ApiErrors.DatasetNotFound, `The hub has no dataset ${e.dataset_id} that this workspace can read`)),
  AssignmentRejected: (
    e: AssignmentRejected
  ): Effect.Effect<never, ApiErrors.LeaderboardDatasetMinRowsRequired | ApiErrors.LeaderboardRunningAssignmentBlocked> =>
    Effect.fail(
      e.reason === "min_rows"
        ? apiError(ApiErrors.LeaderboardDatasetMinRowsRequired, e.message, { leaderboard_id: e.leaderboard_id })
        : apiError(ApiErrors.LeaderboardRunningAssignmentBlocked, e.message, { leaderboard_id: e.leaderboard_id })
    ),
  NoSuccessfulFineTune: (e: NoSuccessfulFineTune) =>
    Effect.fail(apiError(ApiErrors.NoSuccessfulFineTune, e.message, { model_id: e.model_id })),
  BaseModelUnavailable: (e: BaseModelUnavailable) =>
    Effect.fail(apiError(ApiErrors.BaseModelUnavailable, e.message, { model_id: e.model_id })),
  FineTuneInProgress: (e: FineTuneInProgress) =>
    Effect.fail(apiError(ApiErrors.FineTuneInProgress, `Fine-tune ${e.run_id} of this model has not ended: one at a time`, {
      run_id: e.run_id
    })),
  VersionDeployed: (e: VersionDeployed) =>
    Effect.fail(apiError(ApiErrors.VersionDeployed, `The version is ${e.status} already`, {
      version_id: e.version_id,
      status: e.status
    })),
  NoTrainingData: (e: NoTrainingData) => Effect.fail(apiError(ApiErrors.NoTrainingData, e.message, { model_id: e.model_id }))
} as const

type Mapper = typeof toApiError
type DomainError = { readonly _tag: keyof Mapper }
type ApiErrorFor<E> = E extends { readonly _tag: infer T extends keyof Mapper }
  ? ReturnType<Mapper[T]> extends Effect.Effect<any, infer X, any> ? X : never
  : never

/** Maps every domain error an effect can fail with to its contract error. */
export const mapDomainErrors = <A, E extends DomainError, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, ApiErrorFor<E>, R> =>
  Effect.catch(effect, (e) => {
    // the mapper for e's own tag: TypeScript cannot pair a union of functions with the union of their arguments
    const toApi = toApiError[e._tag] as (e: DomainError) => Effect.Effect<never, unknown>
    return toApi(e) as Effect.Effect<never, ApiErrorFor<E>>
  })
