import { ByteSize, Cause, Effect } from "effect"
import type * as Types from "effect/Types"
import { Headers, HttpIncomingMessage, HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { randomUUID } from "node:crypto"
import {
  Internal,
  InvalidBody,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  Unauthorized,
  UnsupportedMediaType,
  UpstreamError
} from "./api/Errors.ts"
import { answerOfCause, errorBody, type ErrorAnswer, errorHeaders, notUtf8, validationFailed } from "./ErrorAnswer.ts"
import { jsonBodyIssue, urlIssue, utf8Text } from "./RequestInput.ts"
import { logRequest, pathOf } from "./RequestLog.ts"

/** The largest request body accepted (push requests of 10 MiB of rows fit, with JSON overhead). */
export const maxBodyBytes = 16 * 1024 * 1024

/** On every answer, as the web app's pages have it: browsers take the declared content type as it is. */
export const nosniff = { "x-content-type-options": "nosniff" } as const

const requestIdPattern = /^[A-Za-z0-9._:-]{1,128}$/

/** The caller's `X-Request-Id` when it is sane, else a new one. */
export const requestIdOf = (incoming: string | undefined): string =>
  incoming !== undefined && requestIdPattern.test(incoming) ? incoming : randomUUID()

/** An error answer as a response. */
const responseOf = ({ body, headers, status }: ErrorAnswer) =>
  body === undefined ? HttpServerResponse.empty({ status, headers }) : HttpServerResponse.jsonUnsafe(body, { status, headers })

/** The contract's error body with the status and code of an error class (or of a bare response). */
const errorResponse = (
  { code, status }: { readonly status: number; readonly code: string },
  message: string,
  details?: Record<string, unknown>,
  headers: Record<string, string> = {}
) => HttpServerResponse.jsonUnsafe(errorBody(code, message, details), { status, headers })

/** A path as error messages quote it: never more than 200 characters of what the caller sent. */
const shown = (path: string) => path.length > 200 ? `${path.slice(0, 200)}…` : path

const tooLarge = () =>
  errorResponse(PayloadTooLarge, `The request body is larger than ${maxBodyBytes} bytes`, undefined, { connection: "close" })

const bodyMethods = new Set(["POST", "PUT", "PATCH", "DELETE"])

/**
 * Routes that judge each row of a batch alone: a row with U+0000 or a lone surrogate is rejected in
 * the answer and the other rows are stored, so the pipeline checks only their nesting.
 */
const rowByRowPaths = /^\/v1\/leaderboard\/[^/]+\/dataset\/push\/?$/

/** Whether the route at `path` (a request's, or an endpoint's own `/v1/leaderboard/:leaderboard_id/…`) judges each row alone. */
export const isRowByRow = (path: string) => rowByRowPaths.test(path)

/**
 * The request with its body text as read here. The platform decodes the body again on every read of
 * `text` (the HttpApi's payload decoding reads it too): a push of 10 MiB would be decoded twice.
 */
const withText = (request: HttpServerRequest.HttpServerRequest, text: string): HttpServerRequest.HttpServerRequest =>
  Object.create(request, { text: { value: Effect.succeed(text) } })

/**
 * A JSON body's text, or the pipeline's refusal of its bytes (see RequestInput): not UTF-8 (400
 * `invalid_json`), U+0000 or lone surrogates, or nested too deep (400 `validation_failed`). The one
 * check of a body, the front door's too.
 */
export const jsonBodyText = (bytes: Uint8Array, depthOnly: boolean): string | ErrorAnswer => {
  const text = utf8Text(bytes)
  if (text === undefined) return notUtf8
  const inBody = jsonBodyIssue(text, { depthOnly })
  return inBody === undefined ? text : validationFailed([inBody])
}

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
    if (inUrl !== undefined) return responseOf(validationFailed([inUrl]))
    const length = Number(request.headers["content-length"] ?? 0)
    if (length > maxBodyBytes) return tooLarge()
    if (!bodyMethods.has(request.method) || !(request.headers["content-type"] ?? "").includes("json")) return request
    const text = jsonBodyText(new Uint8Array(yield* request.arrayBuffer), isRowByRow(pathOf(request.url)))
    return typeof text === "string" ? withText(request, text) : responseOf(text)
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

/** A 401 or 429 answered by an endpoint (encoded by the HttpApi) with the headers its status calls for (see ErrorAnswer). */
const withErrorHeaders = (response: HttpServerResponse.HttpServerResponse) => {
  let body: unknown = undefined
  if (response.body._tag === "Uint8Array") {
    try {
      body = JSON.parse(new TextDecoder().decode(response.body.body))
    } catch {
      body = undefined
    }
  }
  return HttpServerResponse.setHeaders(response, errorHeaders(response.status, body))
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

  /** The router's own failures (no route, a body it could not read), else the error answer both transports give. */
  const fromCause = (cause: Cause.Cause<unknown>, request: HttpServerRequest.HttpServerRequest) => {
    const error = Cause.hasInterruptsOnly(cause) ? undefined : Cause.squash(cause)
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
    return Effect.map(answerOfCause(cause), responseOf)
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
      if (response.status === 401 || response.status === 429) response = withErrorHeaders(response)
      yield* logRequest({ requestId, method: request.method, url: request.url, status: response.status, started })
      return HttpServerResponse.setHeaders(response, { ...nosniff, "x-request-id": requestId })
    }), { global: true })
}
