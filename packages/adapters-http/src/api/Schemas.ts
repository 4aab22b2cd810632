import { DateTime, Effect, Option, Schema, SchemaIssue, SchemaTransformation } from "effect"

/** Timestamps on the wire: ISO 8601 UTC with milliseconds. */
export const Timestamp = Schema.String.annotate({
  format: "date-time",
  description: "ISO 8601 UTC with milliseconds, e.g. 2026-11-21T10:00:00.000Z"
}).pipe(Schema.decodeTo(
  Schema.DateTimeUtc,
  SchemaTransformation.transformEffect<DateTime.Utc, string>({
    decode: (s, options) =>
      Option.match(DateTime.make(s), {
        onNone: () => Effect.fail(new SchemaIssue.InvalidValue({ expected: "an ISO 8601 date-time" }, s, options)),
        onSome: (dt) => Effect.succeed(DateTime.toUtc(dt))
      }),
    encode: (utc) => Effect.succeed(DateTime.formatIso(utc))
  })
))
export const NullableTimestamp = Schema.NullOr(Timestamp)

/** A timestamp the server writes (ISO 8601 UTC with milliseconds), described as one but kept a string. */
export const IsoTimestamp = Schema.String.annotate({ format: "date-time", description: "ISO 8601 UTC with milliseconds" })

export const Uuid = Schema.String.check(Schema.isUUID())

/** A required human label: not blank, at most `max` characters. */
export const Label = (max: number) =>
  Schema.String.check(
    Schema.isMaxLength(max),
    Schema.isPattern(/\S/, { message: "Expected a non-blank string" })
  )
