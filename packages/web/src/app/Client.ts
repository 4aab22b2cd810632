import { Cause, Exit, ManagedRuntime } from "effect"
import type { Effect } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { csrfHeader, type WebSessionView } from "@podium/adapters-http/access/WebSessionApi"
import { Api } from "@podium/adapters-http/api/Api"

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

const runtime = ManagedRuntime.make(FetchHttpClient.layer)

/**
 * A caller whose every request carries `headers`; the browser adds the web session's cookie to
 * each (same origin), which no script here can read. `onUnauthorized` hears of a 401.
 */
const callerWith = async (headers: Readonly<Record<string, string>>, onUnauthorized: () => void): Promise<Caller> => {
  const client = await runtime.runPromise(HttpApiClient.make(Api, {
    baseUrl: location.origin,
    transformClient: HttpClient.mapRequest(HttpClientRequest.setHeaders(headers))
  }))
  return async (call) => {
    const exit = await runtime.runPromiseExit(call(client))
    if (Exit.isSuccess(exit)) return exit.value
    const error = Cause.squash(exit.cause)
    const body = bodyOf(error)
    if (body?.code === "unauthorized") onUnauthorized()
    if (body !== undefined) throw new CallFailed(body.code, body.message)
    throw new CallFailed("unavailable", "Podium could not be reached, or answered something unexpected. Try again.")
  }
}

/** A signed-in browser: its web session (who, until when) and a caller acting by its cookie. */
export interface SignedIn {
  readonly session: WebSessionView
  readonly call: Caller
}

/** The caller of a web session: its cookie, and its CSRF token on every request (the server asks it of those that change state). */
const signedIn = async (session: WebSessionView, onExpired: () => void): Promise<SignedIn> => ({
  session,
  call: await callerWith({ [csrfHeader]: session.csrf_token }, onExpired)
})

/**
 * Signs the browser in with `credential` (a session token or an OpenID Connect ID token), sent
 * once: the server keeps the session and sets its HttpOnly cookie, and the credential is dropped
 * here (never kept in memory, storage or a URL). `onExpired` hears of a 401 afterwards (the
 * session ended or was signed out elsewhere).
 */
export const openSession = async (credential: string, onExpired: () => void): Promise<SignedIn> => {
  const bearer = await callerWith({ authorization: `Bearer ${credential}` }, () => {})
  return signedIn(await bearer((c) => c.webSession.open()), onExpired)
}

/** The web session this browser's cookie holds (after a reload), or undefined when none lasts. */
export const restoreSession = async (onExpired: () => void): Promise<SignedIn | undefined> => {
  const cookieOnly = await callerWith({}, () => {})
  try {
    return await signedIn(await cookieOnly((c) => c.webSession.current()), onExpired)
  } catch (error) {
    if (error instanceof CallFailed && error.code === "unauthorized") return undefined
    throw error
  }
}

/** Signs out: the server ends the session and clears its cookie. */
export const closeSession = (call: Caller): Promise<void> => call((c) => c.webSession.close())
