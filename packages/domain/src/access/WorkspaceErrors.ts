import { Schema } from "effect"
import { InviteId, UserId } from "../shared/index.ts"

export class InviteNotPending extends Schema.TaggedError<InviteNotPending>()("InviteNotPending", {
  invite_id: InviteId,
  status: Schema.String
}) {}

export class AlreadyMember extends Schema.TaggedError<AlreadyMember>()("AlreadyMember", {
  email: Schema.String
}) {}

export class OwnerCannotBeRemoved extends Schema.TaggedError<OwnerCannotBeRemoved>()("OwnerCannotBeRemoved", {
  user_id: UserId
}) {}
