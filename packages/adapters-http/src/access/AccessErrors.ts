import { Effect, Schema } from "effect"
import type * as Access from "@podium/domain/access"
import { apiError, ErrorClass, type ErrorAnswers, Forbidden, InsufficientScope, Unauthorized } from "../api/Errors.ts"

// The HTTP errors of workspaces, invites and token budgets; credentials and scopes answer with the
// shared ones (api/Errors.ts).

export class AlreadyMember extends ErrorClass<AlreadyMember>()("AlreadyMember", 409, "already_member") {}
export class OwnerCannotBeRemoved extends ErrorClass<OwnerCannotBeRemoved>()("OwnerCannotBeRemoved", 409, "owner_cannot_be_removed") {}
export class InviteNotPending extends ErrorClass<InviteNotPending>()(
  "InviteNotPending",
  409,
  "invite_not_pending",
  Schema.Struct({ status: Schema.String })
) {}
export class BudgetExceeded extends ErrorClass<BudgetExceeded>()(
  "BudgetExceeded",
  429,
  "budget_exceeded",
  Schema.Struct({ budget_limit: Schema.Finite, spent_usd: Schema.Finite, retry_after_seconds: Schema.Finite })
) {}

/** Access's domain errors as contract errors; `MailFailed` is the invite mail's, which no handler waits for. */
export const accessErrors = {
  Unauthenticated: (e) => Effect.fail(apiError(Unauthorized, e.message)),
  InsufficientScope: (e) =>
    Effect.fail(e.accepted_scopes === undefined
      ? apiError(InsufficientScope, `This needs the ${e.required_scope} scope`, { required_scope: e.required_scope })
      : apiError(InsufficientScope, `This needs one of the scopes ${e.accepted_scopes.join(", ")}`, {
        required_scope: e.required_scope,
        accepted_scopes: e.accepted_scopes
      })),
  Forbidden: (e) => Effect.fail(apiError(Forbidden, e.message)),
  AlreadyMember: (e) => Effect.fail(apiError(AlreadyMember, `${e.email} is already a member of this workspace`)),
  OwnerCannotBeRemoved: () => Effect.fail(apiError(OwnerCannotBeRemoved, "The owner of a workspace cannot be removed")),
  InviteNotPending: (e) => Effect.fail(apiError(InviteNotPending, `The invite is ${e.status}`, { status: e.status })),
  BudgetExceeded: (e) =>
    Effect.fail(apiError(BudgetExceeded, "The API token's budget is used up until it resets", {
      budget_limit: e.budget_limit,
      spent_usd: e.spent_usd,
      retry_after_seconds: e.retry_after_seconds
    }))
} satisfies ErrorAnswers<typeof Access, "MailFailed">
