import { Effect, Option } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { type Asset, buildAssets, readAssets, withConfig } from "@podium/web/Assets"
import { Oidc } from "./Oidc.ts"

/**
 * The page may load only its own script and stylesheet and talk only to this server (and, with an
 * OpenID Connect provider, to its token endpoint and its issuer, whose discovery document tells
 * the app the provider is up); it is never framed.
 */
const contentSecurityPolicy = (connect: ReadonlyArray<string>) =>
  `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src ${["'self'", ...connect].join(" ")}; ` +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

const pageHeaders = (connect: ReadonlyArray<string>) => ({
  "cache-control": "no-cache",
  "content-security-policy": contentSecurityPolicy(connect),
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer"
})

// content-addressed names: a new build is a new name
const assetHeaders = { "cache-control": "public, max-age=31536000, immutable", "x-content-type-options": "nosniff" }

const originOf = (url: string) => {
  try {
    return [new URL(url).origin]
  } catch {
    return []
  }
}

/**
 * The browser app at `/` (its routes live in the URL's hash) and its assets under `/assets/`: the
 * build `npm ci` and `npm start` write, else one made in memory now (a checkout whose build was
 * removed still serves the app). The page carries the app's settings: the OpenID Connect client
 * when one is configured (its endpoints from the provider's discovery document), else none, and the
 * app asks for a session token.
 */
export const layerWebApp = HttpRouter.use(Effect.fnUntraced(function*(router) {
  const { client: oidc } = yield* Oidc
  const built = yield* Effect.promise(() => readAssets())
  const assets = built ?? (yield* Effect.promise(() => buildAssets()))
  for (const asset of assets.filter((a) => a.path !== "/")) {
    yield* router.add(
      "GET",
      asset.path as HttpRouter.PathInput,
      HttpServerResponse.uint8Array(asset.bytes, { contentType: asset.contentType, headers: assetHeaders })
    )
  }
  const index = assets.find((a) => a.path === "/") as Asset
  const page = new TextDecoder().decode(index.bytes)
  const html = (config: unknown, connect: ReadonlyArray<string>) =>
    HttpServerResponse.text(withConfig(page, config), { contentType: index.contentType, headers: pageHeaders(connect) })
  if (Option.isNone(oidc)) return yield* router.add("GET", "/", html({ oidc: null }, []))
  const { clientId, discover, issuer } = oidc.value
  yield* router.add(
    "GET",
    "/",
    Effect.promise(() => discover().then((provider) => ({ provider }), (error: unknown) => ({ error }))).pipe(
      Effect.flatMap((found) =>
        "provider" in found
          ? Effect.succeed(html({
            oidc: {
              issuer: found.provider.issuer,
              client_id: clientId,
              authorization_endpoint: found.provider.authorization_endpoint,
              token_endpoint: found.provider.token_endpoint
            }
          }, [...new Set([...originOf(found.provider.token_endpoint), ...originOf(found.provider.issuer)])]))
          : Effect.as(
            Effect.logWarning("the identity provider's discovery document could not be read", found.error),
            html({ oidc: { issuer, client_id: clientId, error: "The identity provider cannot be reached. Try again shortly." } }, [])
          )
      )
    )
  )
}))

/** Paths the web app answers (GET only), for the request pipeline's 405s. */
export const webAppPaths = ["/"]
