import { Cause, Effect, Exit, Layer, ManagedRuntime } from "effect"
import { FetchHttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import { Api } from "@podium/adapters-http/api/Api"
import { ApiTokenAuth, PushAuth, SessionAuth } from "@podium/adapters-http/api/Security"

/**
 * The app talks to Podium through the typed client derived from the HttpApi contract, the same one
 * the tests use: every route, payload and answer is checked against the contract's schemas.
 */
export type PodiumClient = HttpApiClient.ForApi<typeof Api>

/** A call through the typed client: resolves to the decoded success, rejects with `CallFailed`. */
export type Caller = <A, E>(call: (client: PodiumClient) => Effect.Effect<A, E>) => Promise<A>

/** A refused or failed call, with the contract's error code when the server answered one. */
export class CallFailed extends Error {
  readonly code: string
  constructor(code: string, message: string) {
    super(message)
    this.code = code
  }
}

const bodyOf = (error: unknown): { readonly code: string; readonly message: string } | undefined => {
  const body = (error as { readonly error?: { readonly code?: unknown; readonly message?: unknown } } | null)?.error
  return typeof body?.code === "string" && typeof body.message === "string"
    ? { code: body.code, message: body.message }
    : undefined
}

/**
 * A caller acting with the session token (kept in memory only: never in storage or a URL).
 * `onExpired` hears of a 401 (the session ended or was refused) after sign-in.
 */
export const makeCaller = async (sessionToken: string, onExpired: () => void = () => {}): Promise<Caller> => {
  const bearer = HttpClientRequest.bearerToken(sessionToken)
  const credentials = Layer.mergeAll(
    HttpApiMiddleware.layerClient(ApiTokenAuth, ({ next, request }) => next(bearer(request))),
    HttpApiMiddleware.layerClient(SessionAuth, ({ next, request }) => next(bearer(request))),
    HttpApiMiddleware.layerClient(PushAuth, ({ next, request }) => next(bearer(request)))
  )
  const runtime = ManagedRuntime.make(Layer.mergeAll(credentials, FetchHttpClient.layer))
  const client = await runtime.runPromise(HttpApiClient.make(Api, { baseUrl: location.origin }))
  return async (call) => {
    const exit = await runtime.runPromiseExit(call(client))
    if (Exit.isSuccess(exit)) return exit.value
    const error = Cause.squash(exit.cause)
    const body = bodyOf(error)
    if (body?.code === "unauthorized") onExpired()
    if (body !== undefined) throw new CallFailed(body.code, body.message)
    throw new CallFailed("unavailable", "Podium could not be reached, or answered something unexpected. Try again.")
  }
}
