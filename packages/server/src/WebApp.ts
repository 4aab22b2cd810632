import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { type Asset, buildAssets, readAssets } from "@podium/web/Assets"

/**
 * The page may load only its own script and stylesheet and talk only to this server; it is never
 * framed. Inline SVG attributes are styles of our own stylesheet, not inline styles.
 */
const contentSecurityPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

const responseOf = (asset: Asset) =>
  HttpServerResponse.uint8Array(asset.bytes, {
    contentType: asset.contentType,
    headers: asset.path === "/"
      ? {
        "cache-control": "no-cache",
        "content-security-policy": contentSecurityPolicy,
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer"
      }
      // content-addressed names: a new build is a new name
      : { "cache-control": "public, max-age=31536000, immutable", "x-content-type-options": "nosniff" }
  })

/**
 * The browser app at `/` (its routes live in the URL's hash) and its assets under `/assets/`: the
 * build `npm ci` and `npm start` write, else one made in memory now (a checkout whose build was
 * removed still serves the app).
 */
export const layerWebApp = HttpRouter.use(Effect.fnUntraced(function*(router) {
  const built = yield* Effect.promise(() => readAssets())
  const assets = built ?? (yield* Effect.promise(() => buildAssets()))
  for (const asset of assets) yield* router.add("GET", asset.path as HttpRouter.PathInput, responseOf(asset))
}))

/** Paths the web app answers (GET only), for the request pipeline's 405s. */
export const webAppPaths = ["/"]
