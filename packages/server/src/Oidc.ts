import { Context, Effect, Layer, Option, type Redacted, Schema } from "effect"
import { SessionVerifierJose } from "@podium/adapters-node/access/SessionVerifierJose"
import { SafeHttp } from "@podium/adapters-providers/SafeHttpClient"
import type { PodiumConfig } from "./Config.ts"

/** What the browser app and the session check need from the identity provider's discovery document. */
export const OidcProvider = Schema.Struct({
  issuer: Schema.String,
  authorization_endpoint: Schema.String,
  token_endpoint: Schema.String,
  jwks_uri: Schema.String
})
export type OidcProvider = typeof OidcProvider.Type

const decodeProvider = Schema.decodeUnknownPromise(OidcProvider)

/**
 * Sign-in through an OpenID Connect provider (`OIDC_ISSUER` + `OIDC_CLIENT_ID`): the browser app runs
 * the authorization-code flow with PKCE as a public client, and the ID token it gets is the session
 * (checked against the provider's JWKS, issuer and the client id as audience). The discovery
 * document is read on first need and again after a failed read, so a provider that is down when
 * Podium starts does not stop it.
 */
export class Oidc extends Context.Service<Oidc, {
  readonly client: Option.Option<{
    readonly issuer: string
    readonly clientId: string
    readonly discover: () => Promise<OidcProvider>
  }>
}>()("@podium/server/Oidc") {
  static layer(config: PodiumConfig): Layer.Layer<Oidc, never, SafeHttp> {
    return Layer.effect(Oidc)(SafeHttp.useSync(({ fetch }) => {
      if (Option.isNone(config.oidcIssuer) || Option.isNone(config.oidcClientId)) return Oidc.of({ client: Option.none() })
      const issuer = config.oidcIssuer.value
      let found: Promise<OidcProvider> | undefined
      const read = async () => {
        const response = await fetch(`${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`, {
          headers: { accept: "application/json" }
        })
        if (!response.ok) throw new Error(`the identity provider answered ${response.status} for its discovery document`)
        const provider = await decodeProvider(await response.json())
        // OpenID Connect Discovery 1.0, 4.3: the document's issuer is the one configured
        if (provider.issuer.replace(/\/+$/, "") !== issuer.replace(/\/+$/, "")) {
          throw new Error(`the discovery document names issuer ${provider.issuer}, not ${issuer}`)
        }
        return provider
      }
      const discover = () => {
        found ??= read().catch((error: unknown) => {
          found = undefined
          throw error
        })
        return found
      }
      return Oidc.of({ client: Option.some({ issuer, clientId: config.oidcClientId.value, discover }) })
    }))
  }
}

/**
 * Sessions, verified as JWTs (SessionVerifierJose): with an OpenID Connect provider the session is
 * its ID token, checked against its JWKS (unless another is set), its issuer, and this app's client
 * id as the audience; else with the HS256 `secret` or the configured JWKS.
 */
export const layerSessions = (config: PodiumConfig, secret: Option.Option<Redacted.Redacted<string>>) =>
  Layer.unwrap(Effect.gen(function*() {
    const http = yield* SafeHttp
    const { client: oidc } = yield* Oidc
    return SessionVerifierJose.layer({
      secret: Option.getOrUndefined(secret),
      jwksUrl: Option.getOrUndefined(config.sessionJwksUrl) ??
        Option.getOrUndefined(Option.map(oidc, ({ discover }) => () => discover().then((p) => p.jwks_uri))),
      issuer: Option.getOrUndefined(Option.orElse(config.sessionJwtIssuer, () => Option.map(oidc, (o) => o.issuer))),
      audience: Option.getOrUndefined(Option.orElse(config.sessionJwtAudience, () => Option.map(oidc, (o) => o.clientId))),
      maxAgeSeconds: config.sessionMaxAge,
      trustedEmailIssuers: config.sessionTrustedEmailIssuers,
      fetch: http.fetch
    })
  })).pipe(Layer.provideMerge(Oidc.layer(config)))
