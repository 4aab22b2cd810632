import { Context } from "effect"
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import type { Principal, Scope } from "@podium/domain/access"
import { CsrfTokenRequired, InsufficientScope, requestErrors, TooManyFailedAuthentications, Unauthorized } from "./Errors.ts"

/** The caller, as established by the route's authentication middleware. */
export class CurrentPrincipal extends Context.Service<CurrentPrincipal, Principal>()(
  "@podium/adapters-http/api/Security/CurrentPrincipal"
) {}

/** Endpoint annotation: the API-token scopes the endpoint takes, any one of which will do (usually one). */
export class RequiredScope extends Context.Service<RequiredScope, readonly [Scope, ...Array<Scope>]>()(
  "@podium/adapters-http/api/Security/RequiredScope"
) {}

/**
 * The endpoint needs `scope` on an API token: checked by ApiTokenAuth/PushAuth at run time, and
 * stated in the OpenAPI document as the ApiToken requirement's role (`security: [{ApiToken:
 * [scope]}]`) and as `x-required-scope`, so clients and tests can read it.
 */
export const requiresScope = (scope: Scope): Context.Context<never> => requiresAnyScope([scope])

/**
 * The endpoint takes an API token carrying any one of `scopes`, checked where `requiresScope` is.
 * With more than one, the OpenAPI document lists one ApiToken requirement per scope (OpenAPI's
 * alternatives: `security: [{ApiToken: [a]}, {ApiToken: [b]}]`) and names them in
 * `x-accepted-scopes` instead of `x-required-scope`.
 */
export const requiresAnyScope = (scopes: readonly [Scope, ...Array<Scope>]): Context.Context<never> =>
  Context.merge(
    Context.make(RequiredScope, scopes),
    OpenApi.annotations({
      transform: (operation) => ({
        ...operation,
        security: (operation.security ?? []).flatMap((requirement: Record<string, Array<string>>) =>
          "ApiToken" in requirement
            ? scopes.map((scope) => ({ ...requirement, ApiToken: [scope] }))
            : [requirement]
        ),
        ...(scopes.length === 1 ? { "x-required-scope": scopes[0] } : { "x-accepted-scopes": scopes })
      })
    })
  )

export const apiTokenScheme = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(OpenApi.Format, "service"),
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "An API token (`pod_…`) from POST /api/tokens, with the scope the operation names. " +
      "A signed-in session token is accepted too and acts with every scope in the caller's workspace."
  )
)

export const sessionScheme = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(OpenApi.Format, "JWT"),
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "The session JWT of a signed-in user: it must carry `exp` and `iat` and last at most SESSION_MAX_AGE " +
      "(default 24 h) from `iat`, with 60 s of clock skew allowed. API tokens are not accepted."
  )
)

export const pushTokenScheme = HttpApiSecurity.apiKey({ key: "X-Service-Push-Token", in: "header" }).pipe(
  HttpApiSecurity.annotate(OpenApi.Description, "A leaderboard's dataset push token (`hpd_…`).")
)

/**
 * An API token may be missing, invalid, or without the scope the route names; an address may have
 * failed too often; a request the web session's cookie signs in may lack its CSRF token.
 */
const tokenErrors = [Unauthorized, InsufficientScope, CsrfTokenRequired, TooManyFailedAuthentications]

/** Routes with a scope: an API token carrying it, or a session. */
export class ApiTokenAuth extends HttpApiMiddleware.Service<ApiTokenAuth, { provides: CurrentPrincipal }>()(
  "@podium/adapters-http/api/Security/ApiTokenAuth",
  { security: { ApiToken: apiTokenScheme }, error: tokenErrors }
) {}

/** Routes for signed-in users only (administration, human evaluation, deploy). */
export class SessionAuth extends HttpApiMiddleware.Service<SessionAuth, { provides: CurrentPrincipal }>()(
  "@podium/adapters-http/api/Security/SessionAuth",
  { security: { Session: sessionScheme }, error: [Unauthorized, CsrfTokenRequired, TooManyFailedAuthentications] }
) {}

/**
 * Dataset push routes: the leaderboard's push token, or an API token with the scope. The schemes are
 * tried in this order and the last refusal is the answer, so the ApiToken side judges both headers
 * at once: each presented credential must pass (see Authentication).
 */
export class PushAuth extends HttpApiMiddleware.Service<PushAuth, { provides: CurrentPrincipal }>()(
  "@podium/adapters-http/api/Security/PushAuth",
  { security: { PushToken: pushTokenScheme, ApiToken: apiTokenScheme }, error: tokenErrors }
) {}

/**
 * On every endpoint: what the request pipeline itself answers (400 `validation_failed`, also what a
 * use case's invalid input maps to; 400 `invalid_body`, 413 `payload_too_large`, 500 `internal`),
 * so the OpenAPI document and typed clients know them. It changes nothing at run time.
 */
export class RequestErrors extends HttpApiMiddleware.Service<RequestErrors>()(
  "@podium/adapters-http/api/Security/RequestErrors",
  { error: requestErrors }
) {}
