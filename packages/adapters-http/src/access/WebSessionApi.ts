import { Context, type Redacted, Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSchema, HttpApiSecurity, OpenApi } from "effect/http-api"
import type { ActiveWebSession } from "@podium/domain/access"
import { UserId } from "@podium/domain/shared"
import { CsrfTokenRequired, TooManyFailedAuthentications, Unauthorized } from "../api/Errors.ts"
import { Timestamp } from "../api/Schemas.ts"
import { SessionAuth } from "../api/Security.ts"

/** The cookie that holds a browser's web session (its opaque secret, never a token). */
export const webSessionCookie = "podium_session"

/** The header a request the cookie signs in must carry on POST, PUT, PATCH and DELETE: the session's CSRF token. */
export const csrfHeader = "X-Podium-CSRF"

/** How the web session's cookie is described, once for the scheme and the routes. */
const cookieRules = `The cookie \`${webSessionCookie}\` is HttpOnly, SameSite=Strict, Path=/, and Secure when Podium is ` +
  "served over https (PUBLIC_BASE_URL is https, or the proxy sends X-Forwarded-Proto: https); it holds an opaque " +
  "secret (the server keeps only its digest), and it lasts until the token that opened it expires (its `exp`), " +
  "never longer. It signs in the web app's requests: every route but the serving path and the OpenAI model list " +
  "(leaderboard and model inference, chat completions, GET /v1/models…, which take bearer credentials alone), and " +
  "only when the request sends no Authorization or X-Service-Push-Token header. A POST, " +
  `PUT, PATCH or DELETE it signs in must send the session's \`csrf_token\` as \`${csrfHeader}\`, else 403 ` +
  "`csrf_token_required`."

export const webSessionScheme = HttpApiSecurity.apiKey({ key: webSessionCookie, in: "cookie" }).pipe(
  HttpApiSecurity.annotate(OpenApi.Description, `A web session from POST /api/session. ${cookieRules}`)
)

/** The web session a request's cookie names, as WebSessionAuth found it. */
export class CurrentWebSession extends Context.Service<CurrentWebSession, ActiveWebSession & {
  readonly secret: Redacted.Redacted<string>
}>()("@podium/adapters-http/access/WebSessionApi/CurrentWebSession") {}

/** The web session's own routes (read it, end it): its cookie, and its CSRF token to end it. */
export class WebSessionAuth extends HttpApiMiddleware.Service<WebSessionAuth, { provides: CurrentWebSession }>()(
  "@podium/adapters-http/access/WebSessionApi/WebSessionAuth",
  { security: { WebSession: webSessionScheme }, error: [Unauthorized, CsrfTokenRequired, TooManyFailedAuthentications] }
) {}

export const WebSessionView = Schema.Struct({
  user_id: UserId,
  email: Schema.NullOr(Schema.String).annotate({ description: "The email of the token that opened the session" }),
  expires_at: Timestamp.annotate({ description: "When the session ends: the `exp` of the token that opened it" }),
  csrf_token: Schema.String.annotate({
    description: `Send as ${csrfHeader} on every POST, PUT, PATCH and DELETE the session's cookie signs in`
  })
}).annotate({ identifier: "WebSession" })
export type WebSessionView = typeof WebSessionView.Type

export class WebSessionApi extends HttpApiGroup.make("webSession")
  .add(
    HttpApiEndpoint.post("open", "/api/session", {
      success: WebSessionView.pipe(HttpApiSchema.status(201)),
      error: Unauthorized
    }).middleware(SessionAuth).annotateMerge(OpenApi.annotations({
      summary: "Sign the browser in: trade a session token for a web session cookie",
      description: "Takes a signed-in user's session token or OpenID Connect ID token as `Authorization: Bearer` " +
        "(verified as every session is; API tokens are refused 401, and so is a request without the header: the " +
        `cookie cannot open another session), and sets the web session's cookie. ${cookieRules} A token already ` +
        "past its `exp` opens none (401). Opening a session ends the one the browser's cookie held, if any."
    })),
    HttpApiEndpoint.get("current", "/api/session", {
      success: WebSessionView
    }).middleware(WebSessionAuth).annotateMerge(OpenApi.annotations({
      summary: "The browser's web session: who is signed in, until when, and its CSRF token",
      description: "For the web app after a reload. 401 (and the cookie cleared) when the session has ended, was " +
        "signed out, or is unknown."
    })),
    HttpApiEndpoint.delete("close", "/api/session", {
      success: HttpApiSchema.NoContent
    }).middleware(WebSessionAuth).annotateMerge(OpenApi.annotations({
      summary: "Sign the browser out: end the web session and clear its cookie",
      description: `Deletes the session on the server (its cookie signs nothing in afterwards, wherever it was ` +
        `copied) and clears the cookie. Needs ${csrfHeader} like every DELETE the cookie signs in.`
    }))
  )
  .annotateMerge(OpenApi.annotations({
    title: "Web Sessions",
    description: "The web app's sign-in: a session token or ID token is traded once for an HttpOnly cookie, so a " +
      "reload keeps the reader signed in and no script on the page can read the credential."
  }))
{}
