import { Cause, Context, Effect, Exit, Layer, Schema } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { HttpApi, HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import { expect } from "vitest"
import { Api } from "@podium/adapters-http/api/Api"
import { ApiTokenAuth, PushAuth, SessionAuth } from "@podium/adapters-http/api/Security"
import type { Podium, RequestOptions } from "./Podium.ts"

/**
 * The typed way end-to-end tests call Podium: `HttpApiClient` over real HTTP, with the contract's
 * schemas on both sides. `const api = client(podium, token)`, then
 * `await api((c) => c.leaderboards.create({ payload }))` is the decoded success, and
 * `await expectError(api((c) => ...), 409, "stale_revision")` checks a failure's status and code.
 */

/** Successes decode strictly: a field the contract does not name fails the test, it is not dropped. */
const StrictApi = Api.annotate(HttpApi.SuccessParseOptions, { onExcessProperty: "error" })

export type PodiumClient = HttpApiClient.ForApi<typeof Api>

/** A call through the typed client: resolves to the decoded success, rejects with `ApiFailure` on a non-2xx. */
export type Caller = <A, E>(call: (client: PodiumClient) => Effect.Effect<A, E>) => Promise<A>

/** The body every non-2xx answer has, whatever error class the contract declares for it. */
const ErrorBody = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  details: Schema.optionalKey(Schema.Record(Schema.String, Schema.Unknown))
})
type ErrorBody = typeof ErrorBody.Type

/** A non-2xx answer, read from the wire (status and body), whichever error class decoded it. */
export class ApiFailure extends Error {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
  readonly body: unknown
  readonly error: ErrorBody
  constructor(status: number, headers: Readonly<Record<string, string>>, text: string, body: unknown, error: ErrorBody) {
    super(`${status} ${error.code}: ${error.message}`)
    this.status = status
    this.headers = headers
    this.text = text
    this.body = body
    this.error = error
  }
}

/** The last response of the running call, so a failure is judged by what came over the wire. */
const LastResponse = Context.Reference<{ current: HttpClientResponse.HttpClientResponse | undefined }>(
  "test/support/Client/LastResponse",
  { defaultValue: () => ({ current: undefined }) }
)

const withBearer = (token: string | undefined) => (request: HttpClientRequest.HttpClientRequest) =>
  token === undefined ? request : HttpClientRequest.bearerToken(request, token)

/** Client sides of the security middlewares: the caller's token as bearer, a push token (`hpd_…`) in its header. */
const credentials = (token: string | undefined) => {
  const bearer = withBearer(token)
  return Layer.mergeAll(
    HttpApiMiddleware.layerClient(ApiTokenAuth, ({ next, request }) => next(bearer(request))),
    HttpApiMiddleware.layerClient(SessionAuth, ({ next, request }) => next(bearer(request))),
    HttpApiMiddleware.layerClient(PushAuth, ({ next, request }) =>
      next(
        token?.startsWith("hpd_") === true
          ? HttpClientRequest.setHeader(request, "x-service-push-token", token)
          : bearer(request)
      ))
  )
}

const decodeErrorBody = Schema.decodeUnknownOption(Schema.Struct({ error: ErrorBody }))

const failureOf = (status: number, headers: Readonly<Record<string, string>>, text: string): ApiFailure => {
  let body: unknown = undefined
  try {
    body = JSON.parse(text)
  } catch {
    // not JSON: the contract check below says so
  }
  const decoded = decodeErrorBody(body)
  if (decoded._tag === "None") throw new Error(`${status} without an error body: ${text}`)
  return new ApiFailure(status, headers, text, body, decoded.value.error)
}

/**
 * A raw `podium.request`, judged like a typed call (its JSON body, or an `ApiFailure`): for requests
 * the typed client will not send, such as a payload or query the contract forbids.
 */
export const unchecked = async (podium: Podium, method: string, path: string, options?: RequestOptions) => {
  const { status, headers, text, body } = await podium.request(method, path, options)
  if (status >= 300) throw failureOf(status, Object.fromEntries(headers), text)
  return body as unknown
}

/** A typed client of `podium` acting with `token` (a session, an API token or a push token; none: anonymous). */
export const client = (podium: Podium, token?: string): Caller => {
  const made = Effect.runPromise(
    HttpApiClient.make(StrictApi, {
      transformClient: (http) =>
        http.pipe(
          HttpClient.mapRequest(HttpClientRequest.prependUrl(podium.url)),
          HttpClient.tap((response) =>
            Effect.map(Effect.service(LastResponse), (last) => {
              last.current = response
            })
          )
        )
    }).pipe(Effect.provide(Layer.mergeAll(credentials(token), FetchHttpClient.layer)))
  )
  return async (call) => {
    const last: { current: HttpClientResponse.HttpClientResponse | undefined } = { current: undefined }
    const exit = await Effect.runPromiseExit(call(await made).pipe(Effect.provideService(LastResponse, last)))
    if (Exit.isSuccess(exit)) return exit.value
    const response = last.current
    if (response !== undefined && response.status >= 300) {
      throw failureOf(response.status, response.headers, await Effect.runPromise(response.text))
    }
    const answered = response === undefined
      ? "no response"
      : `${response.status} ${await Effect.runPromise(response.text)}`
    throw new Error(`${answered}\n${Cause.pretty(exit.cause)}`)
  }
}

/** Awaits a call that must fail with `status` and `code`; returns the failure for further checks. */
export const expectError = async (
  call: Promise<unknown>,
  status: number,
  code: string,
  label = ""
): Promise<ApiFailure> => {
  const failure = await call.then(
    (value) => {
      throw new Error(`${label}: expected ${status} ${code}, got ${JSON.stringify(value)}`)
    },
    (error: unknown) => error
  )
  if (!(failure instanceof ApiFailure)) throw failure
  expect(failure.status, `${label} ${failure.text}`).toBe(status)
  expect(failure.error.code, label).toBe(code)
  return failure
}

/** Awaits a call that must be refused as 400 `validation_failed` with its first issue at `path`. */
export const expectValidation = async (call: Promise<unknown>, path: ReadonlyArray<string>, label = "") => {
  const failure = await expectError(call, 400, "validation_failed", label)
  expect(issuePath(failure), label).toEqual(path)
  return failure
}

const issuePath = (failure: ApiFailure): unknown => {
  const issues = failure.error.details?.["issues"]
  return Array.isArray(issues) ? (issues[0] as { path?: unknown } | undefined)?.path : undefined
}
