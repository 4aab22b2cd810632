import { Schema } from "effect"

/** Timestamps on the wire: ISO 8601 UTC with milliseconds. */
export const Timestamp = Schema.DateTimeUtcFromString.annotate({
  description: "ISO 8601 UTC with milliseconds",
  examples: ["2026-11-21T10:00:00.000Z" as never]
})
export const NullableTimestamp = Schema.NullOr(Timestamp)

export const Uuid = Schema.String.check(Schema.isUUID())

/** A required human label: not blank, at most `max` characters. */
export const Label = (max: number) =>
  Schema.String.check(
    Schema.isMaxLength(max),
    Schema.isPattern(/\S/, { message: "Expected a non-blank string" })
  )
