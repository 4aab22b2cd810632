import { Schema } from "effect"

/**
 * Every non-2xx response carries `{"error": {"code", "message", "details"?}}`. One class per status:
 * the code says what happened, the class decides the status. Classes (not plain structs) so the
 * server can tell two errors of the same shape apart when it encodes them.
 */
export const ErrorBody = Schema.Struct({
  code: Schema.String.annotate({ description: "Stable snake_case code, e.g. `validation_failed`" }),
  message: Schema.String.annotate({ description: "A human sentence" }),
  details: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
}).annotate({ identifier: "ErrorBody" })
export type ErrorBody = typeof ErrorBody.Type

const fields = { error: ErrorBody }

export class BadRequest extends Schema.Class<BadRequest>("BadRequest")(fields, { httpApiStatus: 400 }) {}
export class Unauthorized extends Schema.Class<Unauthorized>("Unauthorized")(fields, { httpApiStatus: 401 }) {}
export class Forbidden extends Schema.Class<Forbidden>("Forbidden")(fields, { httpApiStatus: 403 }) {}
export class NotFound extends Schema.Class<NotFound>("NotFound")(fields, { httpApiStatus: 404 }) {}
export class Conflict extends Schema.Class<Conflict>("Conflict")(fields, { httpApiStatus: 409 }) {}
export class PayloadTooLarge extends Schema.Class<PayloadTooLarge>("PayloadTooLarge")(fields, { httpApiStatus: 413 }) {}
export class TooManyRequests extends Schema.Class<TooManyRequests>("TooManyRequests")(fields, { httpApiStatus: 429 }) {}
export class BadGateway extends Schema.Class<BadGateway>("BadGateway")(fields, { httpApiStatus: 502 }) {}
export class InternalError extends Schema.Class<InternalError>("InternalError")(fields, { httpApiStatus: 500 }) {}
export class ServiceUnavailable
  extends Schema.Class<ServiceUnavailable>("ServiceUnavailable")(fields, { httpApiStatus: 503 })
{}

type ErrorClass<A> = new(props: { readonly error: ErrorBody }) => A

/** `error(Conflict, "stale_revision", "…")` builds the error value handlers fail with. */
export const apiError = <A>(
  Class: ErrorClass<A>,
  code: string,
  message: string,
  details?: Record<string, unknown>
): A => new Class({ error: details === undefined ? { code, message } : { code, message, details } })
