import { Schema } from "effect"
import { Scope } from "./Scope.ts"

/** No usable credential: missing, malformed, unknown, revoked or expired. */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  message: Schema.String
}) {}

/** A valid credential that lacks the scope an operation needs. */
export class InsufficientScope extends Schema.TaggedError<InsufficientScope>()("InsufficientScope", {
  required_scope: Scope
}) {}

/** A valid credential without access to the workspace, or with too small a role. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  message: Schema.String
}) {}
