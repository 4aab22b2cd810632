import { Effect, Redacted } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { type WebSession, WebSessions } from "@podium/domain/access"
import { Api } from "../api/Api.ts"
import { apiError, Unauthorized } from "../api/Errors.ts"
import { bearerOf } from "../handlers/Authentication.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"
import { CurrentWebSession, WebSessionView } from "./WebSessionApi.ts"
import { clearWebSessionCookie, ServedOverHttps, setWebSessionCookie, webSessionSecretOf } from "./WebSessionCookie.ts"

const view = (session: WebSession, csrfToken: string) =>
  WebSessionView.make({ user_id: session.user_id, email: session.email, expires_at: session.expires_at, csrf_token: csrfToken })

const bearerRequired = apiError(
  Unauthorized,
  "Send the session token as Authorization: Bearer <token> to open a web session (a web session cannot open another)"
)

export const WebSessionHttp = HttpApiBuilder.group(
  Api,
  "webSession",
  Effect.fn(function*(handlers) {
    const sessions = yield* WebSessions
    const httpsAlways = yield* ServedOverHttps
    return handlers
      .handle("open", () =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const bearer = bearerOf(request.headers.authorization)
          if (bearer === "") return yield* Effect.fail(bearerRequired)
          const opened = yield* mapDomainErrors(sessions.open(Redacted.make(bearer)))
          // the browser holds one session: the one its cookie named ends here
          const previous = webSessionSecretOf(request.headers.cookie ?? "")
          if (previous !== undefined) yield* sessions.close(Redacted.make(previous))
          yield* setWebSessionCookie(httpsAlways, opened.secret, opened.session.expires_at)
          return view(opened.session, opened.csrfToken)
        }))
      .handle("current", () => Effect.map(Effect.service(CurrentWebSession), ({ csrfToken, session }) => view(session, csrfToken)))
      .handle("close", () =>
        Effect.gen(function*() {
          const { secret } = yield* CurrentWebSession
          yield* sessions.close(secret)
          yield* clearWebSessionCookie(httpsAlways)
        }))
  })
)
