import { Context, Effect, Layer, Redacted } from "effect"
import {
  InsufficientScope,
  Unauthenticated,
  type Principal,
  grants,
  Authentication,
} from "@podium/domain/access"
import type { HttpApiEndpoint } from "effect/http-api"
import { HttpServerRequest } from "effect/http"
import { ApiTokenAuth, CurrentPrincipal, PushAuth, RequestErrors, RequiredScope, SessionAuth } from "../api/Security.ts"
import { mapDomainErrors } from "./ErrorMapping.ts"

const missing = new Unauthenticated({ message: "Missing credential: send Authorization: Bearer <token>" })
const missingEither = new Unauthenticated({
  message: "Missing credential: send X-Service-Push-Token: <push token> or Authorization: Bearer <token>"
})
const apiTokenRefused = new Unauthenticated({
  message: "API tokens are not accepted here: this operation needs a signed-in user session"
})

/** Sessions act with every scope; API tokens must carry the scope the endpoint names. */
const checkScope = (principal: Principal, endpoint: HttpApiEndpoint.Top) => {
  const required = Context.getOrUndefined(endpoint.annotations, RequiredScope)
  return required === undefined || principal._tag !== "ApiTokenPrincipal" || grants(principal.token.scopes, required)
    ? Effect.succeed(principal)
    : Effect.fail(new InsufficientScope({ required_scope: required }))
}

/** Runs the endpoint as `principal`, or answers 401/403 in the contract's shape. */
const authenticated = <A, E, R, Refused extends Unauthenticated | InsufficientScope>(
  principal: Effect.Effect<Principal, Refused>,
  httpEffect: Effect.Effect<A, E, R>
) =>
  mapDomainErrors(principal).pipe(
    Effect.flatMap((p) => Effect.provideService(httpEffect, CurrentPrincipal, p))
  )

/** `Authorization: Bearer`: an API token (`pod_…`, scope checked) or a signed-in session. */
const bearer = (auth: Authentication["Service"]) =>
<A, E, R>(
  httpEffect: Effect.Effect<A, E, R>,
  { credential, endpoint }: { readonly credential: Redacted.Redacted<string>; readonly endpoint: HttpApiEndpoint.Top }
) =>
  authenticated(
    Effect.gen(function*() {
      const value = Redacted.value(credential)
      if (value === "") return yield* missing
      const principal = Authentication.isApiTokenSecret(value)
        ? yield* auth.apiToken(credential)
        : yield* auth.session(credential)
      return yield* checkScope(principal, endpoint)
    }),
    httpEffect
  )

export const layerAuthentication = Layer.mergeAll(
  Layer.succeed(RequestErrors, RequestErrors.of((httpEffect) => httpEffect)),
  Layer.effect(
    ApiTokenAuth,
    Effect.gen(function*() {
      return ApiTokenAuth.of({ ApiToken: bearer(yield* Authentication) })
    })
  ),
  Layer.effect(
    SessionAuth,
    Effect.gen(function*() {
      const auth = yield* Authentication
      return SessionAuth.of({
        Session: (httpEffect, { credential }) =>
          authenticated(Effect.gen(function*() {
            const value = Redacted.value(credential)
            if (value === "") return yield* missing
            if (Authentication.isApiTokenSecret(value)) return yield* apiTokenRefused
            return yield* auth.session(credential)
          }), httpEffect)
      })
    })
  ),
  Layer.effect(
    PushAuth,
    Effect.gen(function*() {
      const auth = yield* Authentication
      const pushToken = <A, E, R>(httpEffect: Effect.Effect<A, E, R>, credential: Redacted.Redacted<string>) =>
        authenticated(Effect.gen(function*() {
          if (Redacted.value(credential) === "") return yield* missingEither
          return yield* auth.pushToken(credential)
        }), httpEffect)
      return PushAuth.of({
        PushToken: (httpEffect, { credential }) => pushToken(httpEffect, credential),
        // Tried last, so its refusal is the answer: without a bearer token it judges the push token
        // again, so a refused push token is answered as such rather than as a missing bearer.
        ApiToken: (httpEffect, options) =>
          Effect.flatMap(Effect.service(HttpServerRequest.HttpServerRequest), (request) =>
            Redacted.value(options.credential) === ""
              ? pushToken(httpEffect, Redacted.make(request.headers["x-service-push-token"] ?? ""))
              : bearer(auth)(httpEffect, options))
      })
    })
  )
)
