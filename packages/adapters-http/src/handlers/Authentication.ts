import { Context, Effect, Layer, Option, Redacted } from "effect"
import {
  type ActiveWebSession,
  InsufficientScope,
  Unauthenticated,
  type Principal,
  type Scope,
  grants,
  Authentication,
  WebSessions,
} from "@podium/domain/access"
import type { HttpApiEndpoint } from "effect/http-api"
import { HttpServerRequest } from "effect/http"
import { CurrentWebSession, csrfHeader, WebSessionAuth } from "../access/WebSessionApi.ts"
import { clearWebSessionCookie, sameCsrfToken, ServedOverHttps, webSessionSecretOf } from "../access/WebSessionCookie.ts"
import * as ApiErrors from "../api/Errors.ts"
import { ApiTokenAuth, CurrentPrincipal, PushAuth, RequestErrors, RequiredScope, SessionAuth } from "../api/Security.ts"
import { FailedAuthentications } from "../auth/FailedAuthentications.ts"
import { InferenceApi } from "../inference/InferenceApi.ts"
import { OpenAiModelsApi } from "../inference/OpenAiModelsApi.ts"
import { ModelInferenceApi } from "../models/ModelServingApi.ts"
import { mapDomainErrors } from "./ErrorMapping.ts"

const missing = new Unauthenticated({ message: "Missing credential: send Authorization: Bearer <token>" })
const missingEither = new Unauthenticated({
  message: "Missing credential: send X-Service-Push-Token: <push token> or Authorization: Bearer <token>"
})
const apiTokenRefused = new Unauthenticated({
  message: "API tokens are not accepted here: this operation needs a signed-in user session"
})
const noWebSession = ApiErrors.apiError(
  ApiErrors.Unauthorized,
  "No web session: sign in first (POST /api/session with the session token as Authorization: Bearer)"
)

/**
 * What a request presents: its bearer credential and push token ("" when absent), the client's
 * address, and its Cookie header with the CSRF token beside it (undefined when absent).
 */
export interface Presented {
  readonly bearer: string
  readonly pushToken: string
  readonly address: string | undefined
  readonly cookie: string | undefined
  readonly csrf: string | undefined
}

/** The credentials a route takes: a bearer (API token or session), a session only, or a push token or a bearer. */
export type Accepts = "bearer" | "session" | "push"

/**
 * How a route takes the web session's cookie: not at all (the serving path), as a credential, or
 * as one that must come with the session's CSRF token (a route that changes state).
 */
export type CookieUse = "none" | "read" | "write"

/** What a route asks of its caller: the credentials it takes, the scopes an API token must carry one of, the cookie. */
export interface Requirement {
  readonly accepts: Accepts
  readonly scope: readonly [Scope, ...Array<Scope>] | undefined
  readonly cookie: CookieUse
}

const changesState = new Set(["POST", "PUT", "PATCH", "DELETE"])

const routeKey = (endpoint: HttpApiEndpoint.Top) => `${endpoint.method} ${endpoint.path}`

/**
 * The serving path (leaderboard and model inference, chat completions) and the OpenAI model list:
 * API clients' routes, which take bearer credentials alone. The web session's cookie signs in the
 * web app's routes, every other one. The front door's routes are all here: the cookie costs the
 * serving path nothing, and both transports judge a request by the same rule either way.
 */
const bearerOnly = new Set(
  [InferenceApi, ModelInferenceApi, OpenAiModelsApi].flatMap((group) => Object.values(group.endpoints).map(routeKey))
)

const cookieUses = new WeakMap<HttpApiEndpoint.Top, CookieUse>()

/** How `endpoint` takes the web session's cookie (worked out once per endpoint). */
const cookieUse = (endpoint: HttpApiEndpoint.Top): CookieUse => {
  let use = cookieUses.get(endpoint)
  if (use === undefined) {
    use = bearerOnly.has(routeKey(endpoint)) ? "none" : changesState.has(endpoint.method) ? "write" : "read"
    cookieUses.set(endpoint, use)
  }
  return use
}

/** The scopes the endpoint names (`requiresScope`, `requiresAnyScope`), if any. */
const requiredScope = (endpoint: HttpApiEndpoint.Top) => Context.getOrUndefined(endpoint.annotations, RequiredScope)

/** What `endpoint` asks of a caller presenting what a middleware taking `accepts` reads (sessions need no scope). */
const requirement = (accepts: Accepts, endpoint: HttpApiEndpoint.Top): Requirement => ({
  accepts,
  scope: accepts === "session" ? undefined : requiredScope(endpoint),
  cookie: cookieUse(endpoint)
})

/** Each authentication middleware and the credentials it takes. */
const middlewareAccepts: ReadonlyArray<readonly [Context.Key<unknown, unknown>, Accepts]> = [
  [PushAuth, "push"],
  [SessionAuth, "session"],
  [ApiTokenAuth, "bearer"]
]

/**
 * What the endpoint asks of its caller, read from its own definition as the router's middleware
 * reads it: the authentication middleware it carries, the scope it names. Undefined for an
 * endpoint open to anyone.
 */
export const requirementOf = (endpoint: HttpApiEndpoint.Top): Requirement | undefined => {
  for (const [middleware, accepts] of middlewareAccepts) {
    if (endpoint.middlewares.has(middleware)) return requirement(accepts, endpoint)
  }
  return undefined
}

/** `Authorization: Bearer <credential>` as the HttpApi reads it (RFC 9110: scheme case-insensitive, 1*SP), "" without. */
export const bearerOf = (authorization: string | undefined): string => {
  if (authorization === undefined || authorization.length <= 6 || authorization.charCodeAt(6) !== 32) return ""
  if (authorization.slice(0, 6).toLowerCase() !== "bearer") return ""
  let start = 7
  while (authorization.charCodeAt(start) === 32) start++
  return authorization.slice(start)
}

/**
 * What a request presents, from its headers and the client's address (the front door reads Node's
 * request). Without a Cookie header (every API client) nothing more is read for the web session.
 */
export const presentedOf = (
  headers: { readonly authorization?: string | undefined; readonly [name: string]: string | ReadonlyArray<string> | undefined },
  address: string | undefined
): Presented => {
  const pushToken = headers["x-service-push-token"]
  const cookie = headers["cookie"]
  const csrf = cookie === undefined ? undefined : headers["x-podium-csrf"]
  return {
    bearer: bearerOf(headers.authorization),
    pushToken: typeof pushToken === "string" ? pushToken : "",
    address,
    cookie: typeof cookie === "string" ? cookie : undefined,
    csrf: typeof csrf === "string" ? csrf : undefined
  }
}

/**
 * The web session's secret when its cookie is what a request to this route signs in with: the
 * route takes the cookie (it is off the serving path), and the request sends no bearer and no
 * push token (those are judged as ever, the cookie aside: a request with a header of its own is
 * no cross-site request).
 */
const cookieSecretOf = (presented: Presented, requirement: Requirement): string | undefined =>
  requirement.cookie === "none" || presented.cookie === undefined || presented.bearer !== "" || presented.pushToken !== ""
    ? undefined
    : webSessionSecretOf(presented.cookie)

const csrfRefusal = (sent: string | undefined) =>
  ApiErrors.apiError(
    ApiErrors.CsrfTokenRequired,
    sent === undefined
      ? `A request that changes state and is signed in by the web session's cookie needs the session's CSRF token in ${csrfHeader} (the csrf_token of POST or GET /api/session)`
      : `${csrfHeader} is not this web session's CSRF token (the csrf_token of GET /api/session)`
  )

/** Sessions act with every scope; API tokens must carry the scope the route names (one of them, when it names several). */
const checkScope = (principal: Principal, required: readonly [Scope, ...Array<Scope>] | undefined) =>
  required === undefined || principal._tag !== "ApiTokenPrincipal" ||
    required.some((scope) => grants(principal.token.scopes, scope))
    ? Effect.succeed(principal)
    : Effect.fail(new InsufficientScope(
      required.length === 1
        ? { required_scope: required[0] }
        : { required_scope: required[0], accepted_scopes: required }
    ))

/**
 * Who the caller is, the one way the router and the front door decide it. An address over its
 * failed credentials (FailedAuthentications) is answered 429 before anything is looked at. Every
 * credential the request presents is verified, and any that fails is 401 even beside one that
 * passes (and counts against the address; a missing credential does not). Who acts: on a push route
 * the push token, else the bearer; elsewhere the bearer (a valid push token beside it is no
 * credential of the route and changes nothing); the bearer's scope is checked last. Off the serving
 * path, a request with neither is signed in by the web session's cookie, if it sends one
 * (an unknown or ended one is 401 and counts as a failure), and one that changes state must send
 * the session's CSRF token too (403 `csrf_token_required`).
 */
export const makeAuthenticator = Effect.gen(function*() {
  const auth = yield* Authentication
  const webSessions = yield* WebSessions
  const failures = yield* FailedAuthentications

  const admit = (address: string | undefined) =>
    Effect.flatMap(failures.retryAfter(address), (seconds) =>
      seconds === 0 ? Effect.void : Effect.fail(ApiErrors.apiError(
        ApiErrors.TooManyFailedAuthentications,
        `Too many failed credentials from this address: try again in ${seconds} s`,
        { retry_after_seconds: seconds }
      )))

  // a chain of plain steps rather than a generator: it runs on every authenticated request
  const identify = ({ address, bearer, pushToken }: Presented, accepts: Accepts): Effect.Effect<Principal, Unauthenticated> => {
    const counted = (check: Effect.Effect<Principal, Unauthenticated>) => Effect.tapError(check, () => failures.record(address))
    /** The bearer checked (when presented), after the push token (`byPushToken`, when presented) was. */
    const withBearer = (byPushToken: Principal | undefined): Effect.Effect<Principal, Unauthenticated> => {
      const acting = accepts === "push" ? byPushToken : undefined
      if (bearer === "") {
        return acting !== undefined ? Effect.succeed(acting) : Effect.fail(accepts === "push" ? missingEither : missing)
      }
      const isApiToken = Authentication.isApiTokenSecret(bearer)
      if (accepts === "session" && isApiToken) return Effect.fail(apiTokenRefused)
      const byBearer = counted(isApiToken ? auth.apiToken(Redacted.make(bearer)) : auth.session(Redacted.make(bearer)))
      return acting === undefined ? byBearer : Effect.as(byBearer, acting)
    }
    return pushToken === "" ? withBearer(undefined) : Effect.flatMap(counted(auth.pushToken(Redacted.make(pushToken))), withBearer)
  }

  /** The web session `secret` names, checked for the CSRF token where the route changes state. */
  const byCookie = (secret: string, { address, csrf }: Presented, requirement: Requirement) =>
    Effect.flatMap(
      mapDomainErrors(Effect.tapError(webSessions.resolve(Redacted.make(secret)), () => failures.record(address))),
      (active) =>
        requirement.cookie !== "write" || sameCsrfToken(csrf, active.csrfToken)
          ? Effect.succeed(active)
          : Effect.fail(csrfRefusal(csrf))
    )

  /** The caller of a route that asks `requirement`, or its 401, 403 or 429 in the contract's shape. */
  const authenticate = (presented: Presented, requirement: Requirement) => {
    const secret = cookieSecretOf(presented, requirement)
    const caller: Effect.Effect<Principal, ApiErrors.Unauthorized | ApiErrors.InsufficientScope | ApiErrors.CsrfTokenRequired> =
      secret === undefined
        ? mapDomainErrors(Effect.flatMap(identify(presented, requirement.accepts), (principal) => checkScope(principal, requirement.scope)))
        : Effect.map(byCookie(secret, presented, requirement), (active) => active.principal)
    return Effect.andThen(admit(presented.address), caller)
  }

  /** A session route's caller: never a scope to miss (so never 403 but for the CSRF token). */
  const authenticateSession = (presented: Presented, requirement: Requirement) => {
    const secret = cookieSecretOf(presented, requirement)
    const caller: Effect.Effect<Principal, ApiErrors.Unauthorized | ApiErrors.CsrfTokenRequired> = secret === undefined
      ? mapDomainErrors(identify(presented, "session"))
      : Effect.map(byCookie(secret, presented, requirement), (active) => active.principal)
    return Effect.andThen(admit(presented.address), caller)
  }

  /** The caller of the web session's own routes: its cookie alone, whatever else the request sends. */
  const authenticateWebSession = (presented: Presented, requirement: Requirement) => {
    const secret = presented.cookie === undefined ? undefined : webSessionSecretOf(presented.cookie)
    const session: Effect.Effect<ActiveWebSession & { readonly secret: Redacted.Redacted<string> }, ApiErrors.Unauthorized | ApiErrors.CsrfTokenRequired> =
      secret === undefined
        ? Effect.fail(noWebSession)
        : Effect.map(byCookie(secret, presented, requirement), (active) => ({ ...active, secret: Redacted.make(secret) }))
    return Effect.andThen(admit(presented.address), session)
  }

  return { authenticate, authenticateSession, authenticateWebSession }
})

/**
 * The credentials of the request being routed, read by the one function the front door reads
 * them with (`presentedOf`); its `bearerOf` reads the bearer as the HttpApi's own decoding does.
 */
const presented = Effect.map(
  Effect.service(HttpServerRequest.HttpServerRequest),
  (request) => presentedOf(request.headers, Option.getOrUndefined(request.remoteAddress))
)

/** Runs the endpoint as the caller `principal` names, or answers 401/403/429 in the contract's shape. */
const as = <A, E, R, E2>(principal: Effect.Effect<Principal, E2, HttpServerRequest.HttpServerRequest>, httpEffect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(principal, (p) => Effect.provideService(httpEffect, CurrentPrincipal, p))

export const layerAuthentication = Layer.mergeAll(
  Layer.succeed(RequestErrors, RequestErrors.of((httpEffect) => httpEffect)),
  Layer.effect(
    ApiTokenAuth,
    Effect.gen(function*() {
      const { authenticate } = yield* makeAuthenticator
      return ApiTokenAuth.of({
        ApiToken: (httpEffect, { endpoint }) =>
          as(Effect.flatMap(presented, (presented) => authenticate(presented, requirement("bearer", endpoint))), httpEffect)
      })
    })
  ),
  Layer.effect(
    SessionAuth,
    Effect.gen(function*() {
      const { authenticateSession } = yield* makeAuthenticator
      return SessionAuth.of({
        Session: (httpEffect, { endpoint }) =>
          as(Effect.flatMap(presented, (presented) => authenticateSession(presented, requirement("session", endpoint))), httpEffect)
      })
    })
  ),
  Layer.effect(
    WebSessionAuth,
    Effect.gen(function*() {
      const { authenticateWebSession } = yield* makeAuthenticator
      const httpsAlways = yield* ServedOverHttps
      return WebSessionAuth.of({
        // a cookie that signs nothing in any more is cleared with the refusal, so the browser stops sending it
        WebSession: (httpEffect, { endpoint }) =>
          Effect.flatMap(presented, (presented) =>
            authenticateWebSession(presented, requirement("session", endpoint)).pipe(
              Effect.tapError((error) =>
                presented.cookie !== undefined && error.error.code === ApiErrors.Unauthorized.code
                  ? clearWebSessionCookie(httpsAlways)
                  : Effect.void
              ),
              Effect.flatMap((active) => Effect.provideService(httpEffect, CurrentWebSession, active))
            ))
      })
    })
  ),
  Layer.effect(
    PushAuth,
    Effect.gen(function*() {
      const { authenticate } = yield* makeAuthenticator
      return PushAuth.of({
        // The HttpApi tries the schemes in order and answers with the last: the ApiToken side judges
        // both headers at once, so each credential is looked at (and a failure counted) once.
        PushToken: () => Effect.fail(ApiErrors.apiError(ApiErrors.Unauthorized, missingEither.message)),
        ApiToken: (httpEffect, { endpoint }) =>
          as(Effect.flatMap(presented, (presented) => authenticate(presented, requirement("push", endpoint))), httpEffect)
      })
    })
  )
)
