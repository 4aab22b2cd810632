import { Schema } from "effect"
import { Email, UserId, WorkspaceId } from "./Ids.ts"

export const Role = Schema.Literals(["owner", "admin", "member"])
export type Role = typeof Role.Type

/** Roles that may manage tokens, integrations, invites and deployments. */
export const canAdminister = (role: Role): boolean => role === "owner" || role === "admin"

export class User extends Schema.Class<User>("User")({
  id: UserId,
  subject: Schema.String,
  email: Schema.NullOr(Schema.String)
}) {}

export class Membership extends Schema.Class<Membership>("Membership")({
  workspace_id: WorkspaceId,
  user_id: UserId,
  email: Schema.NullOr(Email),
  role: Role,
  joined_at: Schema.DateTimeUtc
}) {}

export class Workspace extends Schema.Class<Workspace>("Workspace")({
  id: WorkspaceId,
  name: Schema.String,
  personal: Schema.Boolean,
  created_at: Schema.DateTimeUtc
}) {}
