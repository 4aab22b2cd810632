import { Schema } from "effect"

/** The object does not exist, or lives in a workspace the caller cannot see. */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  resource: Schema.String,
  id: Schema.String
}) {}

/** Input that is well-formed but breaks a rule the schema cannot express. */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  message: Schema.String,
  path: Schema.Array(Schema.Union([Schema.String, Schema.Number]))
}) {}
