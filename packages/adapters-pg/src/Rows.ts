import { DateTime, Schema } from "effect"

/** timestamptz columns arrive as Date. */
export const Timestamp = Schema.DateTimeUtcFromDate
export const NullableTimestamp = Schema.NullOr(Schema.DateTimeUtcFromDate)

export const toDate = (dt: DateTime.Utc): Date => DateTime.toDateUtc(dt)
export const toDateOrNull = (dt: DateTime.Utc | null): Date | null => (dt === null ? null : DateTime.toDateUtc(dt))
