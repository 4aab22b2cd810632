import { Context, Effect, Layer, Option, Redacted } from "effect"
import {
  InsufficientScope,
  Unauthenticated,
  type Principal,
  type Scope,
  grants,
  Authentication,
} from "@podium/domain/access"
import type { HttpApiEndpoint } from "effect/http-api"
import { HttpServerRequest } from "effect/http"
import * as ApiErrors from "../api/Errors.ts"
import { ApiTokenAuth, CurrentPrincipal, PushAuth, RequestErrors, RequiredScope, SessionAuth } from "../api/Security.ts"
import { FailedAuthentications } from "../auth/FailedAuthentications.ts"
import { mapDomainErrors } from "./ErrorMapping.ts"

const missing = new Unauthenticated({ message: "Missing credential: send Authorization: Bearer <token>" })
const missingEither = new Unauthenticated({
  message: "Missing credential: send X-Service-Push-Token: <push token> or Authorization: Bearer <token>"
})
const apiTokenRefused = new Unauthenticated({
  message: "API tokens are not accepted here: this operation needs a signed-in user session"
})

/** What a request presents: its bearer credential and push token ("" when absent), and the client's address. */
export interface Presented {
  readonly bearer: string
  readonly pushToken: string
  readonly address: string | undefined
}

/** The credentials a route takes: a bearer (API token or session), a session only, or a push token or a bearer. */
export type Accepts = "bearer" | "session" | "push"

/** What a route asks of its caller: the credentials it takes, and the scopes an API token must carry one of. */
export interface Requirement {
  readonly accepts: Accepts
  readonly scope: readonly [Scope, ...Array<Scope>] | undefined
}

/** The scopes the endpoint names (`requiresScope`, `requiresAnyScope`), if any. */
const requiredScope = (endpoint: HttpApiEndpoint.Top) => Context.getOrUndefined(endpoint.annotations, RequiredScope)

/** What `endpoint` asks of a caller presenting what a middleware taking `accepts` reads (sessions need no scope). */
const requirement = (accepts: Accepts, endpoint: HttpApiEndpoint.Top): Requirement => ({
  accepts,
  scope: accepts === "session" ? undefined : requiredScope(endpoint)
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

/** What a request presents, from its headers and the client's address (the front door reads Node's request). */
export const presentedOf = (
  headers: { readonly authorization?: string | undefined; readonly [name: string]: string | ReadonlyArray<string> | undefined },
  address: string | undefined
): Presented => {
  const pushToken = headers["x-service-push-token"]
  return { bearer: bearerOf(headers.authorization), pushToken: typeof pushToken === "string" ? pushToken : "", address }
}

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
 * credential of the route and changes nothing); the bearer's scope is checked last.
 */
export const makeAuthenticator = Effect.gen(function*() {
  const auth = yield* Authentication
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

  /** The caller of a route that asks `requirement`, or its 401, 403 or 429 in the contract's shape. */
  const authenticate = (presented: Presented, { accepts, scope }: Requirement) =>
    Effect.andThen(
      admit(presented.address),
      mapDomainErrors(Effect.flatMap(identify(presented, accepts), (principal) => checkScope(principal, scope)))
    )

  /** A session route's caller: never a scope to miss (so never 403). */
  const authenticateSession = (presented: Presented) =>
    Effect.andThen(admit(presented.address), mapDomainErrors(identify(presented, "session")))

  return { authenticate, authenticateSession }
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
        Session: (httpEffect) => as(Effect.flatMap(presented, authenticateSession), httpEffect)
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
