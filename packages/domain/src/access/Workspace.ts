import { Result, Schema } from "effect"
import { Forbidden } from "./AuthErrors.ts"
import { UserId, WorkspaceId } from "../shared/index.ts"

export const Role = Schema.Literals(["owner", "admin", "member"])
export type Role = typeof Role.Type

/** Roles that may manage tokens, integrations, invites and deployments. */
export const canAdminister = (role: Role): boolean => role === "owner" || role === "admin"

export class User extends Schema.Class<User>("User")({
  id: UserId,
  subject: Schema.String,
  email: Schema.NullOr(Schema.String)
}) {}

/** A user's place in a workspace. `personal` marks the workspace made for them at first sign-in. */
export class Membership extends Schema.Class<Membership>("Membership")({
  workspace_id: WorkspaceId,
  user_id: UserId,
  role: Role,
  personal: Schema.Boolean,
  joined_at: Schema.DateTimeUtc
}) {}

export class Member extends Schema.Class<Member>("Member")({
  user_id: UserId,
  email: Schema.NullOr(Schema.String),
  role: Role,
  joined_at: Schema.DateTimeUtc
}) {}

/**
 * The workspace a signed-in user acts in: the one `business_id` names (they must belong to it),
 * else their personal workspace.
 */
export const selectMembership = (
  memberships: ReadonlyArray<Membership>,
  businessId: WorkspaceId | undefined
): Result.Result<Membership, Forbidden> => {
  const found = businessId === undefined
    ? memberships.find((m) => m.personal)
    : memberships.find((m) => m.workspace_id === businessId)
  return found === undefined
    ? Result.fail(new Forbidden({ message: "You have no access to this workspace" }))
    : Result.succeed(found)
}

export const requireAdministrator = (membership: Membership): Result.Result<Membership, Forbidden> =>
  canAdminister(membership.role)
    ? Result.succeed(membership)
    : Result.fail(new Forbidden({ message: "This needs the owner or admin role in the workspace" }))
