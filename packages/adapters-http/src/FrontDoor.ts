import { Cause, Effect, Exit, type Fiber, LogLevel, Schema, type SchemaIssue } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Scope } from "@podium/domain/access"
import { Internal } from "./api/Errors.ts"
import { makeAuthenticator } from "./handlers/Authentication.ts"
import { errorBody, nosniff, schemaIssues, validationFailedBody } from "./RequestPipeline.ts"

/**
 * A route answered straight from Node's `request` event, before the HttpApi router: `handle`
 * answers the request and says true, or says false and leaves it to the router untouched.
 */
export interface FrontRoute {
  readonly handle: (request: IncomingMessage, response: ServerResponse) => boolean
}

/** The first route that takes the request. */
export const firstOf = (routes: ReadonlyArray<FrontRoute>): FrontRoute => ({
  handle: (request, response) => routes.some((route) => route.handle(request, response))
})

/** `Authorization: Bearer <credential>` as the HttpApi reads it (RFC 9110: scheme case-insensitive, 1*SP). */
export const bearerOf = (authorization: string | undefined): string => {
  if (authorization === undefined || authorization.length <= 6 || authorization.charCodeAt(6) !== 32) return ""
  if (authorization.slice(0, 6).toLowerCase() !== "bearer") return ""
  let start = 7
  while (authorization.charCodeAt(start) === 32) start++
  return authorization.slice(start)
}


/**
 * The path segments decoded by the endpoint's own params schema, as the router decodes them, or
 * `undefined` when it refuses them. A front route declines the ids it refuses, so the router answers
 * those (its 400 after the credential check included) and the two transports cannot judge an id
 * differently; the ids it takes come out branded, as the handlers get them.
 */
export const paramsOf = <P extends Schema.Top>(endpoint: { readonly "~Params": P; readonly params: Schema.Top | undefined }) => {
  // path params are strings: decoding them needs no services
  const decode = Schema.decodeUnknownExit((endpoint.params ?? Schema.Struct({})) as Schema.Codec<P["Type"], unknown>)
  return (params: Record<string, string>): P["Type"] | undefined => {
    const decoded = decode(params)
    return Exit.isSuccess(decoded) ? decoded.value : undefined
  }
}

/** A payload or query that fails the schema: answered 400 with its issues, as the router answers it. */
export class InvalidInput {
  readonly _tag = "InvalidInput"
  readonly kind: string
  readonly issue: SchemaIssue.Issue
  constructor(kind: string, issue: SchemaIssue.Issue) {
    this.kind = kind
    this.issue = issue
  }
}

/** What a front route answers with: the body (or a stream it writes itself) and its headers. */
export interface Answer {
  readonly status: number
  readonly body: string
  readonly headers?: Record<string, string> | undefined
}

/**
 * The parts every front route shares, so each answers exactly as the router would: the credential
 * check with the router's order and errors, the error bodies (the domain's errors by their status,
 * schema failures as `validation_failed`, anything else a logged 500), and the request log line.
 */
export const makeFrontDoor = Effect.gen(function*() {
  const { authenticate } = yield* makeAuthenticator
  // the request line is logged at Info: no fiber for it when the level is above
  const logsRequests = yield* LogLevel.isEnabled("Info")

  /** The caller of a route that takes a bearer with `scope`, decided as the router decides it. */
  const principalOf = (request: IncomingMessage, scope: Scope) => {
    const pushToken = request.headers["x-service-push-token"]
    return authenticate({
      bearer: bearerOf(request.headers.authorization),
      pushToken: typeof pushToken === "string" ? pushToken : "",
      address: request.socket.remoteAddress
    }, "bearer", scope)
  }

  /** Logs the request line as the router's pipeline does, on `run`'s fiber. */
  const logRequest = (
    run: (effect: Effect.Effect<void>) => Fiber.Fiber<void>,
    request: IncomingMessage,
    requestId: string,
    started: number,
    status: number
  ) => {
    if (!logsRequests) return
    run(Effect.logInfo("request").pipe(Effect.annotateLogs({
      request_id: requestId,
      method: request.method ?? "",
      path: (request.url ?? "").split("?")[0],
      status,
      duration_ms: Math.round((performance.now() - started) * 10) / 10
    })))
  }

  /** Writes `answer` (unless the client left or a head went out) and logs the request. */
  const send = (
    run: (effect: Effect.Effect<void>) => Fiber.Fiber<void>,
    request: IncomingMessage,
    response: ServerResponse,
    requestId: string,
    started: number,
    answer: Answer
  ) => {
    if (!response.destroyed && !response.headersSent) {
      response.writeHead(answer.status, {
        ...answer.headers,
        "content-type": "application/json",
        "content-length": Buffer.byteLength(answer.body),
        ...(answer.status === 401 ? { "www-authenticate": "Bearer" } : {}),
        ...nosniff,
        "x-request-id": requestId
      })
      response.end(answer.body)
    }
    logRequest(run, request, requestId, started, answer.status)
  }

  /** The answer for a failed exit, as the router's error mapping and pipeline would give it. */
  const failure = (
    run: (effect: Effect.Effect<void>) => Fiber.Fiber<void>,
    requestId: string,
    cause: Cause.Cause<unknown>
  ): Answer => {
    if (Cause.hasInterruptsOnly(cause)) return { status: 499, body: "" }
    const error = Cause.squash(cause)
    if (error instanceof InvalidInput) {
      return { status: 400, body: JSON.stringify(validationFailedBody(schemaIssues(error.kind, error.issue))) }
    }
    const status = (error as { readonly constructor?: { readonly status?: unknown } } | null)?.constructor?.status
    if (typeof status === "number" && typeof error === "object" && error !== null && "error" in error) {
      const body = (error as { readonly error: { readonly details?: { readonly retry_after_seconds?: unknown } } }).error
      const retryAfter = status === 429 ? body.details?.retry_after_seconds : undefined
      return {
        status,
        body: JSON.stringify({ error: body }),
        headers: typeof retryAfter === "number" ? { "retry-after": String(retryAfter) } : {}
      }
    }
    run(Effect.logError("request failed", cause).pipe(Effect.annotateLogs("request_id", requestId)))
    return { status: Internal.status, body: JSON.stringify(errorBody(Internal.code, "Internal error")) }
  }

  return { principalOf, send, failure, logRequest }
})
