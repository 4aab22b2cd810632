import { Schema } from "effect"

/** The upload is not a document Podium can read (wrong format, unreadable or too hostile to parse). */
export class UnsupportedDocument extends Schema.TaggedError<UnsupportedDocument>()("UnsupportedDocument", {
  name: Schema.String,
  reason: Schema.String
}) {}
