import { Effect, Result } from "effect"
import { Forbidden } from "./AuthErrors.ts"
import type { WorkspaceId } from "../shared/index.ts"
import type { Principal } from "./Principal.ts"
import { type Membership, requireAdministrator, selectMembership } from "./Workspace.ts"

const sessionOnly = new Forbidden({ message: "This operation needs a signed-in user session" })

/** No access, and why an invite may not have made the user a member yet. */
const noAccess = (principal: Principal & { readonly _tag: "SessionPrincipal" }, refused: Forbidden) =>
  principal.user.email === null || principal.emailVerified
    ? refused
    : new Forbidden({
      message: `${refused.message}: invites to ${principal.user.email} are accepted only once your identity ` +
        "provider marks that email verified (email_verified: true in the session), and this session does not"
    })

/** The membership a session acts through in the workspace `business_id` names (or their personal one). */
export const membershipOf = (principal: Principal, businessId: WorkspaceId | undefined) =>
  principal._tag === "SessionPrincipal"
    ? Effect.fromResult(selectMembership(principal.memberships, businessId)).pipe(
      Effect.mapError((refused) => noAccess(principal, refused))
    )
    : Effect.fail(sessionOnly)

/** As membershipOf, and the role must be owner or admin. */
export const administratorOf = (principal: Principal, businessId: WorkspaceId | undefined) =>
  Effect.flatMap(membershipOf(principal, businessId), (m) => Effect.fromResult(requireAdministrator(m)))

/** The caller's membership in a workspace an object lives in, or None when they cannot see it. */
export const visibleMembership = (principal: Principal, workspaceId: WorkspaceId): Membership | undefined =>
  principal._tag === "SessionPrincipal"
    ? Result.getOrUndefined(selectMembership(principal.memberships, workspaceId))
    : undefined

/**
 * The workspace an operation acts in: an API token's or push token's own workspace (naming another
 * one is forbidden), or the session's selected membership.
 */
export const workspaceOf = (principal: Principal, businessId: WorkspaceId | undefined) => {
  switch (principal._tag) {
    case "SessionPrincipal":
      return Effect.map(membershipOf(principal, businessId), (m) => m.workspace_id)
    case "ApiTokenPrincipal":
      return businessId === undefined || businessId === principal.token.workspace_id
        ? Effect.succeed(principal.token.workspace_id)
        : Effect.fail(new Forbidden({ message: "The API token belongs to another workspace" }))
    case "PushTokenPrincipal":
      return businessId === undefined || businessId === principal.workspaceId
        ? Effect.succeed(principal.workspaceId)
        : Effect.fail(new Forbidden({ message: "The push token belongs to another workspace" }))
  }
}
