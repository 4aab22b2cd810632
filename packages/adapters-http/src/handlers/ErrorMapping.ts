import { Effect } from "effect"
import type { Forbidden as ForbiddenError, InsufficientScope, Unauthenticated } from "@podium/domain/AuthErrors"
import type { InvalidInput, NotFound as NotFoundError } from "@podium/domain/CommonErrors"
import type { IntegrationTokenRejected, IntegrationUnavailable } from "@podium/domain/IntegrationErrors"
import type { AlreadyMember, InviteNotPending } from "@podium/domain/WorkspaceErrors"
import type { BudgetExceeded } from "@podium/domain/Budget"
import type { HubDatasetNotFound } from "@podium/domain/HubDataset"
import type { NoActiveDeployment, NoServingModel, UpstreamFailed } from "@podium/domain/InferenceErrors"
import {
  apiError,
  BadGateway,
  BadRequest,
  Conflict,
  Forbidden,
  NotFound,
  TooManyRequests,
  Unauthorized
} from "../api/Errors.ts"

/** Domain errors are not HTTP errors: this is the one place that decides their status and code. */
export const toApiError = {
  Unauthenticated: (e: Unauthenticated) => Effect.fail(apiError(Unauthorized, "unauthorized", e.message)),
  InsufficientScope: (e: InsufficientScope) =>
    Effect.fail(apiError(Forbidden, "insufficient_scope", `This needs the ${e.required_scope} scope`, {
      required_scope: e.required_scope
    })),
  Forbidden: (e: ForbiddenError) => Effect.fail(apiError(Forbidden, "forbidden", e.message)),
  NotFound: (e: NotFoundError) => Effect.fail(apiError(NotFound, "not_found", `No ${e.resource} ${e.id}`)),
  InvalidInput: (e: InvalidInput) =>
    Effect.fail(apiError(BadRequest, "validation_failed", e.message, {
      issues: [{ path: e.path, message: e.message }]
    })),
  AlreadyMember: (e: AlreadyMember) =>
    Effect.fail(apiError(Conflict, "already_member", `${e.email} is already a member of this workspace`)),
  OwnerCannotBeRemoved: () =>
    Effect.fail(apiError(Conflict, "owner_cannot_be_removed", "The owner of a workspace cannot be removed")),
  InviteNotPending: (e: InviteNotPending) =>
    Effect.fail(apiError(Conflict, "invite_not_pending", `The invite is ${e.status}`, { status: e.status })),
  IntegrationTokenRejected: (e: IntegrationTokenRejected) =>
    Effect.fail(apiError(BadRequest, "invalid_integration_token", `The ${e.provider} rejected the token: ${e.reason}`, {
      provider: e.provider,
      reason: e.reason
    })),
  IntegrationUnavailable: (e: IntegrationUnavailable) =>
    Effect.fail(apiError(BadGateway, "upstream_error", `The ${e.provider} could not be reached: ${e.reason}`, {
      provider: e.provider
    })),
  LeaderboardArchived: () =>
    Effect.fail(apiError(Conflict, "leaderboard_archived", "The leaderboard is archived: set its status to active first")),
  BudgetExceeded: (e: BudgetExceeded) =>
    Effect.fail(apiError(TooManyRequests, "budget_exceeded", "The API token's budget is used up until it resets", {
      budget_limit: e.budget_limit,
      spent_usd: e.spent_usd,
      retry_after_seconds: e.retry_after_seconds
    })),
  StreamingUnsupported: () =>
    Effect.fail(apiError(BadRequest, "streaming_unsupported", "Streaming is not supported: send stream false or leave it out")),
  NoServingModel: (e: NoServingModel) =>
    Effect.fail(apiError(Conflict, "no_serving_model", "The leaderboard has no model to serve: choose a candidate", {
      leaderboard_id: e.leaderboard_id
    })),
  NoActiveDeployment: (e: NoActiveDeployment) =>
    Effect.fail(apiError(Conflict, "no_active_deployment", "The serving model has no active deployment", {
      model_id: e.model_id
    })),
  UpstreamFailed: (e: UpstreamFailed) =>
    Effect.fail(apiError(BadGateway, "upstream_error", `Candidate ${e.candidate_name} failed: ${e.reason}`, {
      candidate_id: e.candidate_id,
      candidate_name: e.candidate_name,
      trace_id: e.trace_id
    })),
  HubDatasetNotFound: (e: HubDatasetNotFound) =>
    Effect.fail(apiError(NotFound, "dataset_not_found", `The hub has no dataset ${e.dataset_id} that this workspace can read`))
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
  Effect.catch(effect, (e) => (toApiError[e._tag] as unknown as (e: E) => Effect.Effect<never, ApiErrorFor<E>>)(e))
