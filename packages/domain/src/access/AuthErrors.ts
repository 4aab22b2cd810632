import { Schema } from "effect"
import { Scope } from "./Scope.ts"

/** No usable credential: missing, malformed, unknown, revoked or expired. */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  message: Schema.String
}) {}

/**
 * A valid credential that lacks the scope an operation needs. An operation that takes any one of
 * several scopes names them all in `accepted_scopes` (`required_scope` is the first of them).
 */
export class InsufficientScope extends Schema.TaggedError<InsufficientScope>()("InsufficientScope", {
  required_scope: Scope,
  accepted_scopes: Schema.optionalKey(Schema.Array(Scope))
}) {}

/** A valid credential without access to the workspace, or with too small a role. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  message: Schema.String
}) {}
