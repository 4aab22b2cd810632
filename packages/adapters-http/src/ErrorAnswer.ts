/**
 * The error answer, the one way both transports (the router's pipeline and the front door) turn a
 * failure into the contract's status, body and headers: a declared error by its own schema and
 * status, a request part that fails its schema as 400 `validation_failed`, a body over its limit
 * as 413, anything else a logged 500 (never with a stack trace on the wire).
 */
import { Cause, Effect, Exit, Schema, SchemaAST, SchemaIssue } from "effect"
import type { HttpApiEndpoint, HttpApiMiddleware } from "effect/http-api"
import { HttpApiError } from "effect/http-api"
import { Internal, InvalidJson, PayloadTooLarge, ValidationFailed } from "./api/Errors.ts"
import type { InputIssue } from "./RequestInput.ts"

/** A failure's answer: its status, its JSON body (none for 499) and the headers its status calls for. */
export interface ErrorAnswer {
  readonly status: number
  readonly body: unknown
  readonly headers: Readonly<Record<string, string>>
}

/** The contract's error body: `{"error": {"code", "message", "details"?}}`. */
export const errorBody = (code: string, message: string, details?: Record<string, unknown>) => ({
  error: details === undefined ? { code, message } : { code, message, details }
})

/**
 * What an error's status calls for: a 401 names the scheme to authenticate with
 * (`WWW-Authenticate: Bearer`), a 429 says when to come back (its body's
 * `details.retry_after_seconds` as `Retry-After`).
 */
export const errorHeaders = (status: number, body: unknown): Readonly<Record<string, string>> => {
  if (status === 401) return { "www-authenticate": "Bearer" }
  if (status !== 429) return {}
  const seconds = (body as { readonly error?: { readonly details?: { readonly retry_after_seconds?: unknown } } } | null)?.error
    ?.details?.retry_after_seconds
  return typeof seconds === "number" ? { "retry-after": String(seconds) } : {}
}

/** An answer with `status` and `body`, and the headers the status calls for. */
export const errorAnswer = (status: number, body: unknown): ErrorAnswer => ({ status, body, headers: errorHeaders(status, body) })

const issueFormatter = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * The validation issues of a failed decode of a request part (`kind`: Params, Payload…), as
 * `[{path, message}]` with `path` an array of keys led by the part's name.
 */
export const schemaIssues = (kind: string, issue: SchemaIssue.Issue): ReadonlyArray<InputIssue> =>
  issueFormatter(issue).issues.map((issue) => ({
    path: [
      kind.toLowerCase(),
      ...(issue.path ?? []).map((key) => (typeof key === "object" && key !== null && "key" in key ? key.key : key))
    ].map((key) => (typeof key === "number" ? key : String(key))),
    message: issue.message
  }))

/** The 400 `validation_failed` body for these issues. */
export const validationFailedBody = (issues: ReadonlyArray<InputIssue>) =>
  errorBody(
    ValidationFailed.code,
    issues.length === 1
      ? `Invalid request: ${issues[0]!.message} at ${issues[0]!.path.join(".")}`
      : `Invalid request: ${issues.length} problems`,
    { issues }
  )

/** The 400 `validation_failed` answer for these issues. */
export const validationFailed = (issues: ReadonlyArray<InputIssue>): ErrorAnswer =>
  errorAnswer(ValidationFailed.status, validationFailedBody(issues))

/** The 400 `invalid_json` answer for a JSON body whose bytes are not UTF-8. */
export const notUtf8 = errorAnswer(
  InvalidJson.status,
  errorBody(InvalidJson.code, "The request body is not valid UTF-8: send JSON as UTF-8")
)

/** The errors an endpoint declares, its own and its middlewares' (as the HttpApi encodes them). */
const declaredSchemas = (endpoint: HttpApiEndpoint.Top): ReadonlyArray<Schema.Top> => {
  const schemas = new Set<Schema.Top>(endpoint.error)
  for (const middleware of endpoint.middlewares) {
    for (const schema of (middleware as HttpApiMiddleware.AnyService).error) schemas.add(schema)
  }
  return [...schemas]
}

const httpApiStatus = SchemaAST.resolveAt<number>("httpApiStatus")

/**
 * The endpoint's declared errors as answers, as the HttpApi encodes them: the first declared schema
 * the error is, its JSON encoding as the body, its `httpApiStatus` as the status. An error the
 * endpoint does not declare has no answer here (the router's encoding fails on it: a logged 500).
 */
export const declaredErrors = (endpoint: HttpApiEndpoint.Top): (error: unknown) => ErrorAnswer | undefined => {
  const encoders = declaredSchemas(endpoint).map((schema) => ({
    is: Schema.is(schema),
    encode: Schema.encodeUnknownExit(Schema.toCodecJson(schema as Schema.Codec<unknown, unknown>)),
    status: httpApiStatus(schema.ast) ?? 500
  }))
  return (error) => {
    for (const { encode, is, status } of encoders) {
      if (!is(error)) continue
      const body = encode(error)
      return Exit.isSuccess(body) ? errorAnswer(status, body.value) : undefined
    }
    return undefined
  }
}

/**
 * The answer for a failed request, on either transport. A client that went away gets 499 (nobody
 * reads it, nothing failed); an error `declared` answers gets its answer; a request part that fails
 * its schema is 400 `validation_failed` with the failing paths; a body over the limit 413; a
 * response that fails its own schema is our bug, a logged 500, and so is anything else.
 */
export const answerOfCause = (
  cause: Cause.Cause<unknown>,
  declared?: (error: unknown) => ErrorAnswer | undefined
): Effect.Effect<ErrorAnswer> => {
  if (Cause.hasInterruptsOnly(cause)) return Effect.succeed({ status: 499, body: undefined, headers: {} })
  const error = Cause.squash(cause)
  const answer = declared?.(error)
  if (answer !== undefined) return Effect.succeed(answer)
  if (HttpApiError.HttpApiSchemaError.is(error)) {
    if (error.kind === "Body" || error.kind === "ResponseHeaders") {
      return Effect.as(Effect.logError("response failed its schema", cause), internal)
    }
    return Effect.succeed(validationFailed(schemaIssues(error.kind, error.cause.issue)))
  }
  if (HttpApiError.HttpApiPayloadTooLarge.is(error)) {
    return Effect.succeed(errorAnswer(PayloadTooLarge.status, errorBody(PayloadTooLarge.code, error.message)))
  }
  return Effect.as(Effect.logError("request failed", cause), internal)
}

const internal = errorAnswer(Internal.status, errorBody(Internal.code, "Internal error"))
