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

/** A cursor page's `limit`: 1–100 (the route says its default). */
export const PageLimit = Schema.NumberFromString.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: 100 }))

/** A cursor-paged list's query: `limit` and `cursor`, the previous page's `next_cursor`. */
export const cursorQuery = <C extends Schema.Top>(cursor: C) => ({
  limit: Schema.optionalKey(PageLimit),
  cursor: Schema.optionalKey(cursor)
})

/** A page of a cursor-paged list: `data` in the list's order and the cursor of the next page. */
export const CursorPage = <A extends Schema.Top, C extends Schema.Top>(item: A, cursor: C) =>
  Schema.Struct({
    data: Schema.Array(item),
    next_cursor: Schema.NullOr(cursor).annotate({
      description: "Pass as `cursor` for the next page (the last item's id) while more remain, else null"
    })
  })
