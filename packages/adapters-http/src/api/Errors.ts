import { type Cause, type Effect, Schema } from "effect"
import { Scope } from "@podium/domain/access"
import { IntegrationProvider } from "@podium/domain/integrations"

const Message = Schema.String.annotate({ description: "A human sentence" })

/**
 * Every non-2xx response carries `{"error": {"code", "message", "details"?}}`: this is its shape for
 * code that reads any error (test clients). The contract itself has one class per code: the shared
 * ones below, each context's in its own folder (`runs/RunsErrors.ts`). A class's schema names the
 * code as a literal (so the OpenAPI document and typed clients tell `stale_revision` from
 * `immutable_case`), its status is its `httpApiStatus`, and `status` and `code` are statics for what
 * answers without an endpoint (the request pipeline).
 */
export const ErrorBody = Schema.Struct({
  code: Schema.String.annotate({ description: "Stable snake_case code, e.g. `validation_failed`" }),
  message: Message,
  details: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
})
export type ErrorBody = typeof ErrorBody.Type

type BodyFields<Code extends string, Details extends Schema.Top> =
  & { readonly code: Schema.Literal<Code>; readonly message: Schema.String }
  & ([Details] extends [never] ? {} : { readonly details: Details })

/** The `error` member of a body with this `code`, and `details` when given (`Schema.optionalKey(...)` if optional). */
export const errorBody = <const Code extends string, Details extends Schema.Top = never>(code: Code, details?: Details) =>
  Schema.Struct({
    code: Schema.Literal(code),
    message: Message,
    ...(details === undefined ? {} : { details })
  } as BodyFields<Code, Details>)

/** `class StaleRevision extends ErrorClass<StaleRevision>()("StaleRevision", 409, "stale_revision", details) {}` */
export const ErrorClass = <Self>() =>
<const Code extends string, const Status extends number, Details extends Schema.Top = never>(
  identifier: string,
  status: Status,
  code: Code,
  details?: Details
) =>
  Object.assign(
    // The identifier on the body too, so the OpenAPI component is `StaleRevision`, not `StaleRevisionEncoded`
    Schema.Class<Self>(identifier)(
      Schema.Struct({ error: errorBody(code, details) }).annotate({ identifier }),
      { httpApiStatus: status }
    ),
    { status, code }
  )

type Details<A> = A extends { readonly error: { readonly details: infer D } } ? [details: D]
  : A extends { readonly error: { readonly details?: infer D } } ? [details?: D]
  : []

/** `apiError(StaleRevision, "…", { revision, current_revision })` builds the error value handlers fail with. */
export const apiError = <A extends { readonly error: { readonly code: string } }>(
  Class: { new(props: { readonly error: A["error"] }): A; readonly code: A["error"]["code"] },
  message: string,
  ...details: Details<A>
): A => {
  const [detail] = details as ReadonlyArray<unknown>
  const error = detail === undefined ? { code: Class.code, message } : { code: Class.code, message, details: detail }
  return new Class({ error: error as A["error"] })
}

type DomainErrorsOf<Module> = {
  [K in keyof Module]: Module[K] extends abstract new(...args: never) => infer E
    ? E extends Cause.YieldableError & { readonly _tag: string } ? E : never
    : never
}[keyof Module]

/** The tags of the tagged errors a domain context exports (`typeof import("@podium/domain/runs")`). */
export type ErrorTagsOf<Module> = DomainErrorsOf<Module>["_tag"]

/**
 * A context's answers: for each tagged error its domain module exports, the contract error it
 * fails with. Each context's table `satisfies` it, so an error the domain adds without an answer
 * (or an answer to an error it no longer has) does not compile; `Unanswered` names the errors no
 * handler meets (a workflow's or a port's own), each a tag the context still exports.
 */
export type ErrorAnswers<Module, Unanswered extends ErrorTagsOf<Module> = never> = {
  readonly [Tag in Exclude<ErrorTagsOf<Module>, Unanswered>]: (
    e: Extract<DomainErrorsOf<Module>, { readonly _tag: Tag }>
  ) => Effect.Effect<never, { readonly error: { readonly code: string; readonly message: string } }>
}

const Issues = Schema.Struct({
  issues: Schema.Array(Schema.Struct({
    path: Schema.Array(Schema.Union([Schema.String, Schema.Number])),
    message: Schema.String
  }))
})

// The errors every context shares: the request pipeline's refusals, credentials, not found, upstream failures.
// 400
export class ValidationFailed extends ErrorClass<ValidationFailed>()("ValidationFailed", 400, "validation_failed", Issues) {}
export class InvalidBody extends ErrorClass<InvalidBody>()("InvalidBody", 400, "invalid_body") {}
/** A JSON body whose bytes are not UTF-8 (RFC 8259): refused whole, never stored with U+FFFD in place of them. */
export class InvalidJson extends ErrorClass<InvalidJson>()("InvalidJson", 400, "invalid_json") {}
// 401, 403
export class Unauthorized extends ErrorClass<Unauthorized>()("Unauthorized", 401, "unauthorized") {}
export class InsufficientScope extends ErrorClass<InsufficientScope>()(
  "InsufficientScope",
  403,
  "insufficient_scope",
  Schema.Struct({ required_scope: Scope, accepted_scopes: Schema.optionalKey(Schema.Array(Scope)) })
) {}
export class Forbidden extends ErrorClass<Forbidden>()("Forbidden", 403, "forbidden") {}
/**
 * A request that changes state, signed in by the web session's cookie, without the session's CSRF
 * token in `X-Podium-CSRF` (or with another one). Bearer credentials never need it.
 */
export class CsrfTokenRequired extends ErrorClass<CsrfTokenRequired>()("CsrfTokenRequired", 403, "csrf_token_required") {}
// 404, 405
export class NotFound extends ErrorClass<NotFound>()("NotFound", 404, "not_found") {}
export class MethodNotAllowed extends ErrorClass<MethodNotAllowed>()(
  "MethodNotAllowed",
  405,
  "method_not_allowed",
  Schema.Struct({ allowed: Schema.Array(Schema.String) })
) {}
// 413, 415, 429
export class PayloadTooLarge extends ErrorClass<PayloadTooLarge>()(
  "PayloadTooLarge",
  413,
  "payload_too_large",
  Schema.optionalKey(Schema.Struct({ limit: Schema.Finite }))
) {}
export class UnsupportedMediaType extends ErrorClass<UnsupportedMediaType>()("UnsupportedMediaType", 415, "unsupported_media_type") {}
/** The client address sent too many credentials that failed: it waits `retry_after_seconds` (also `Retry-After`). */
export class TooManyFailedAuthentications extends ErrorClass<TooManyFailedAuthentications>()(
  "TooManyFailedAuthentications",
  429,
  "too_many_failed_authentications",
  Schema.Struct({ retry_after_seconds: Schema.Finite })
) {}
// 5xx
export class Internal extends ErrorClass<Internal>()("Internal", 500, "internal") {}
export class UpstreamError extends ErrorClass<UpstreamError>()(
  "UpstreamError",
  502,
  "upstream_error",
  Schema.Union([
    Schema.Struct({ provider: IntegrationProvider }),
    Schema.Struct({ candidate_id: Schema.String, candidate_name: Schema.String, trace_id: Schema.String })
  ])
) {}

/** What every endpoint can answer: the request pipeline's refusals (and `validation_failed` for a use case's invalid input). */
export const requestErrors = [ValidationFailed, InvalidBody, InvalidJson, PayloadTooLarge, Internal] as const
