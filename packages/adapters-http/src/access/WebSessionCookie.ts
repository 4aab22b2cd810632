import { Context, DateTime, Duration, Effect, Redacted } from "effect"
import { Cookies, HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { timingSafeEqual } from "node:crypto"
import { webSessionCookie } from "./WebSessionApi.ts"

/**
 * Whether Podium is served over https (PUBLIC_BASE_URL is an https URL): the web session's cookie
 * is then always Secure. Behind a proxy that says so (`X-Forwarded-Proto: https`) it is Secure too;
 * a client that claims https over plain http only gets a cookie its browser will not keep.
 */
export class ServedOverHttps extends Context.Reference<boolean>("@podium/adapters-http/access/WebSessionCookie/ServedOverHttps", {
  defaultValue: () => false
}) {}

/** The web session's secret in a Cookie header, undefined when it names none. */
export const webSessionSecretOf = (cookieHeader: string): string | undefined => {
  if (!cookieHeader.includes(webSessionCookie)) return undefined
  const secret = Cookies.parseHeader(cookieHeader)[webSessionCookie]
  return secret === undefined || secret === "" ? undefined : secret
}

/** Whether the CSRF token a request sent is the session's (compared in constant time). */
export const sameCsrfToken = (sent: string | undefined, expected: string): boolean => {
  if (sent === undefined || sent.length !== expected.length) return false
  const a = Buffer.from(sent)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

const forwardedHttps = (proto: string | undefined) =>
  proto !== undefined && proto.split(",")[0]!.trim().toLowerCase() === "https"

/** The cookie's attributes for the request being answered, given whether Podium is served over https. */
const attributes = (httpsAlways: boolean) =>
  Effect.map(Effect.service(HttpServerRequest.HttpServerRequest), (request) => ({
    httpOnly: true,
    sameSite: "strict" as const,
    path: "/",
    secure: httpsAlways || forwardedHttps(request.headers["x-forwarded-proto"])
  }))

/** Sets the session's cookie on the answer, lasting until `expiresAt` (whole seconds, never past it). */
export const setWebSessionCookie = (httpsAlways: boolean, secret: Redacted.Redacted<string>, expiresAt: DateTime.Utc) =>
  Effect.gen(function*() {
    const options = yield* attributes(httpsAlways)
    const millis = DateTime.toEpochMillis(expiresAt) - DateTime.toEpochMillis(yield* DateTime.now)
    const maxAge = Duration.seconds(Math.max(0, Math.floor(millis / 1000)))
    yield* HttpEffect.appendPreResponseHandler((_request, response) =>
      Effect.orDie(HttpServerResponse.setCookie(response, webSessionCookie, Redacted.value(secret), { ...options, maxAge }))
    )
  })

/** Clears the session's cookie on the answer (whatever the answer is). */
export const clearWebSessionCookie = (httpsAlways: boolean) =>
  Effect.flatMap(attributes(httpsAlways), (options) =>
    HttpEffect.appendPreResponseHandler((_request, response) =>
      Effect.orDie(HttpServerResponse.expireCookie(response, webSessionCookie, options))
    ))
