import { ByteSize, Cause, Effect, SchemaIssue } from "effect"
import type * as Types from "effect/Types"
import { Headers, HttpIncomingMessage, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { randomUUID } from "node:crypto"
import {
  Internal,
  InvalidBody,
  InvalidJson,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  Unauthorized,
  UnsupportedMediaType,
  UpstreamError,
  ValidationFailed
} from "./api/Errors.ts"
import { type InputIssue, jsonBodyIssue, urlIssue, utf8Text } from "./RequestInput.ts"

/** The largest request body accepted (push requests of 10 MiB of rows fit, with JSON overhead). */
export const maxBodyBytes = 16 * 1024 * 1024

/** On every answer, as the web app's pages have it: browsers take the declared content type as it is. */
export const nosniff = { "x-content-type-options": "nosniff" } as const

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/

/** The caller's `X-Request-Id` when it is sane, else a new one. */
export const requestIdOf = (incoming: string | undefined): string =>
  incoming !== undefined && requestIdPattern.test(incoming) ? incoming : randomUUID()

/** The contract's error body: `{"error": {"code", "message", "details"?}}`. */
export const errorBody = (code: string, message: string, details?: Record<string, unknown>) => ({
  error: details === undefined ? { code, message } : { code, message, details }
})

/** The contract's error body with the status and code of an error class (or of a bare response). */
const errorResponse = (
  { code, status }: { readonly status: number; readonly code: string },
  message: string,
  details?: Record<string, unknown>,
  headers: Record<string, string> = {}
) => HttpServerResponse.jsonUnsafe(errorBody(code, message, details), { status, headers })

/** The path alone: query strings stay out of logs. */
const pathOf = (url: string) => new URL(url, "http://x").pathname

/** A path as error messages quote it: never more than 200 characters of what the caller sent. */
const shown = (path: string) => path.length > 200 ? `${path.slice(0, 200)}…` : path

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

const issuesOf = (error: HttpApiError.HttpApiSchemaError) => schemaIssues(error.kind, error.cause.issue)

/** The 400 `validation_failed` body for these issues. */
export const validationFailedBody = (issues: ReadonlyArray<InputIssue>) =>
  errorBody(
    ValidationFailed.code,
    issues.length === 1
      ? `Invalid request: ${issues[0]!.message} at ${issues[0]!.path.join(".")}`
      : `Invalid request: ${issues.length} problems`,
    { issues }
  )

/** The 400 `invalid_json` body for a JSON body whose bytes are not UTF-8. */
export const notUtf8Body = errorBody(InvalidJson.code, "The request body is not valid UTF-8: send JSON as UTF-8")

const invalid = (issues: ReadonlyArray<InputIssue>) =>
  HttpServerResponse.jsonUnsafe(validationFailedBody(issues), { status: ValidationFailed.status })

const tooLarge = () =>
  errorResponse(PayloadTooLarge, `The request body is larger than ${maxBodyBytes} bytes`, undefined, { connection: "close" })

const bodyMethods = new Set(["POST", "PUT", "PATCH", "DELETE"])

/**
 * Routes that judge each row of a batch alone: a row with U+0000 or a lone surrogate is rejected in
 * the answer and the other rows are stored, so the pipeline checks only their nesting.
 */
const rowByRowPaths = /^\/v1\/leaderboard\/[^/]+\/dataset\/push\/?$/

/**
 * The request with its body text as read here. The platform decodes the body again on every read of
 * `text` (the HttpApi's payload decoding reads it too): a push of 10 MiB would be decoded twice.
 */
const withText = (request: HttpServerRequest.HttpServerRequest, text: string): HttpServerRequest.HttpServerRequest =>
  Object.create(request, { text: { value: Effect.succeed(text) } })

/**
 * What no route accepts, refused before any route runs (see RequestInput): a URL or JSON body with
 * U+0000 or lone surrogates, a JSON body that is not UTF-8, JSON nested too deep, and a declared
 * length over the limit (refused without reading the body). Answers the refusal, or the request to route (its text read once).
 */
const refuseHostileInput = (
  request: HttpServerRequest.HttpServerRequest
): Effect.Effect<HttpServerResponse.HttpServerResponse | HttpServerRequest.HttpServerRequest, HttpServerError.HttpServerError> =>
  Effect.gen(function*() {
    const inUrl = urlIssue(request.url)
    if (inUrl !== undefined) return invalid([inUrl])
    const length = Number(request.headers["content-length"] ?? 0)
    if (length > maxBodyBytes) return tooLarge()
    if (!bodyMethods.has(request.method) || !(request.headers["content-type"] ?? "").includes("json")) return request
    const text = utf8Text(new Uint8Array(yield* request.arrayBuffer))
    if (text === undefined) return HttpServerResponse.jsonUnsafe(notUtf8Body, { status: InvalidJson.status })
    const inBody = jsonBodyIssue(text, { depthOnly: rowByRowPaths.test(pathOf(request.url)) })
    return inBody === undefined ? withText(request, text) : invalid([inBody])
  })

/** Codes of bare platform responses: the error class's where one code owns the status, else a generic one. */
const statusCodes: Record<number, string> = {
  400: "bad_request",
  401: Unauthorized.code,
  403: "forbidden",
  404: NotFound.code,
  405: MethodNotAllowed.code,
  406: "not_acceptable",
  409: "conflict",
  413: PayloadTooLarge.code,
  415: UnsupportedMediaType.code,
  429: "too_many_requests",
  500: Internal.code,
  502: UpstreamError.code,
  503: "unavailable"
}

/** The part of an HttpApi the pipeline reads: its routes. */
export interface RouteSource {
  readonly groups: Readonly<Record<string, { readonly endpoints: Readonly<Record<string, { readonly path: string; readonly method: string }>> }>>
}

/** Methods allowed per route pattern, for telling 405 from 404. */
const routeTable = (api: RouteSource) => {
  const routes: Array<{ pattern: RegExp; methods: Set<string> }> = []
  for (const group of Object.values(api.groups)) {
    for (const endpoint of Object.values(group.endpoints)) {
      const source = "^" + endpoint.path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z_]+/g, "[^/]+") + "/?$"
      const existing = routes.find((r) => r.pattern.source === source)
      if (existing) existing.methods.add(endpoint.method)
      else routes.push({ pattern: new RegExp(source), methods: new Set([endpoint.method]) })
    }
  }
  return (path: string): ReadonlyArray<string> => {
    const allowed = new Set<string>()
    for (const route of routes) if (route.pattern.test(path)) route.methods.forEach((m) => allowed.add(m))
    return [...allowed]
  }
}

/** A 429 says when to come back: `details.retry_after_seconds` of its body becomes `Retry-After`. */
const withRetryAfter = (response: HttpServerResponse.HttpServerResponse) => {
  if (response.body._tag !== "Uint8Array") return response
  try {
    const seconds = JSON.parse(new TextDecoder().decode(response.body.body))?.error?.details?.retry_after_seconds
    return typeof seconds === "number" ? HttpServerResponse.setHeader(response, "retry-after", String(seconds)) : response
  } catch {
    return response
  }
}

const isJsonResponse = (response: HttpServerResponse.HttpServerResponse) =>
  response.body._tag === "Uint8Array" && (response.body.contentType ?? "").includes("json")

/**
 * Outermost layer of every request: a request id (the caller's `X-Request-Id` when sane) on the
 * response and in every log line, the body-size limit, and the contract's error body for everything
 * the endpoints themselves do not answer: unknown routes (404), wrong methods (405), bodies that fail
 * to parse or decode (400 with the failing paths), oversized bodies (413) and defects (500, logged,
 * never with a stack trace on the wire).
 */
export const RequestPipeline = (api: RouteSource, extraPaths: ReadonlyArray<string> = []) => {
  const allowedMethods = routeTable(api)

  const fromCause = (cause: Cause.Cause<unknown>, request: HttpServerRequest.HttpServerRequest) => {
    // The client went away mid-request: nobody will read an answer, and nothing failed.
    if (Cause.hasInterruptsOnly(cause)) return Effect.succeed(HttpServerResponse.empty({ status: 499 }))
    const error = Cause.squash(cause)
    // A response that does not fit its own schema is our bug, not the caller's.
    if (HttpApiError.HttpApiSchemaError.is(error) && (error.kind === "Body" || error.kind === "ResponseHeaders")) {
      return Effect.logError("response failed its schema", cause).pipe(
        Effect.as(errorResponse(Internal, "Internal error"))
      )
    }
    if (HttpApiError.HttpApiSchemaError.is(error)) return Effect.succeed(invalid(issuesOf(error)))
    if (HttpApiError.HttpApiPayloadTooLarge.is(error)) {
      return Effect.succeed(errorResponse(PayloadTooLarge, error.message))
    }
    if (HttpServerError.isHttpServerError(error)) {
      const reason = error.reason
      if (reason._tag === "RouteNotFound") {
        const path = pathOf(request.url)
        const allowed = extraPaths.includes(path) ? ["GET"] : allowedMethods(path)
        return Effect.succeed(
          allowed.length > 0 && !allowed.includes(request.method)
            ? errorResponse(MethodNotAllowed, `${request.method} is not allowed on ${shown(path)}`, { allowed }, {
              allow: allowed.join(", ")
            })
            : errorResponse(NotFound, `No route for ${request.method} ${shown(path)}`)
        )
      }
      if (reason._tag === "RequestParseError") {
        return Effect.succeed(
          reason.reason === "BodyTooLarge"
            ? tooLarge()
            : errorResponse(InvalidBody, "The request body could not be read")
        )
      }
    }
    return Effect.logError("request failed", cause).pipe(
      Effect.as(errorResponse(Internal, "Internal error"))
    )
  }

  /** Responses the platform produced bare (415 text, empty 4xx): give them the contract body, typed as JSON. */
  const normalize = (response: HttpServerResponse.HttpServerResponse) => {
    if (response.status < 400 || isJsonResponse(response)) return response
    const code = statusCodes[response.status] ?? "error"
    return errorResponse(
      { status: response.status, code },
      code === UnsupportedMediaType.code ? "Send the request body as application/json" : code.replace(/_/g, " "),
      undefined,
      Headers.remove(response.headers, "content-type")
    )
  }

  return HttpRouter.middleware((app): Effect.Effect<
    HttpServerResponse.HttpServerResponse,
    Types.unhandled,
    HttpServerRequest.HttpServerRequest
  > =>
    Effect.gen(function*() {
      const started = performance.now()
      const request = yield* HttpServerRequest.HttpServerRequest
      const requestId = requestIdOf(request.headers["x-request-id"])
      let response = yield* refuseHostileInput(request).pipe(
        Effect.flatMap((routed) =>
          HttpServerResponse.isHttpServerResponse(routed)
            ? Effect.succeed(routed)
            : Effect.provideService(app, HttpServerRequest.HttpServerRequest, routed)
        ),
        Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(maxBodyBytes)),
        Effect.catchCause((cause) => fromCause(cause, request)),
        Effect.annotateLogs("request_id", requestId)
      )
      response = normalize(response)
      if (response.status === 401) response = HttpServerResponse.setHeader(response, "www-authenticate", "Bearer")
      if (response.status === 429) response = withRetryAfter(response)
      yield* Effect.logInfo("request").pipe(Effect.annotateLogs({
        request_id: requestId,
        method: request.method,
        path: pathOf(request.url),
        status: response.status,
        duration_ms: Math.round((performance.now() - started) * 10) / 10
      }))
      return HttpServerResponse.setHeaders(response, { ...nosniff, "x-request-id": requestId })
    }), { global: true })
}
