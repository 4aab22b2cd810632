import * as oauth from "oauth4webapi"

/** What the server puts in the page: the OpenID Connect client, when one is configured. */
export interface OidcSettings {
  readonly issuer: string
  readonly client_id: string
  readonly authorization_endpoint?: string
  readonly token_endpoint?: string
  /** Set when the server could not read the provider's discovery document. */
  readonly error?: string
}

export const oidcSettings = (): OidcSettings | null => {
  const content = document.querySelector('meta[name="podium-config"]')?.getAttribute("content")
  if (content == null) return null
  try {
    return (JSON.parse(content) as { readonly oidc?: OidcSettings | null }).oidc ?? null
  } catch {
    return null
  }
}

/** The flow's one-time values, kept for the round trip to the provider (never the session itself). */
const pendingKey = "podium.oidc.pending"
interface Pending {
  readonly verifier: string
  readonly state: string
  readonly nonce: string
  /** The workspace an invite link named, to act in once back. */
  readonly workspace: string | null
}

const serverOf = (settings: OidcSettings): oauth.AuthorizationServer => ({
  issuer: settings.issuer,
  authorization_endpoint: settings.authorization_endpoint!,
  token_endpoint: settings.token_endpoint!
})

/** The app's own address, registered with the provider as its redirect URI. */
const redirectUri = () => `${location.origin}/`

/** Plain http is accepted only from a provider configured that way (a local one). */
const insecure = (settings: OidcSettings) => ({ [oauth.allowInsecureRequests]: settings.issuer.startsWith("http:") })

/**
 * Whether the provider answers at all: its discovery document, fetched without reading it (`no-cors`
 * needs no CORS headers from the provider; a refused or timed-out connection still fails), so a
 * provider that is down is reported on this page instead of the browser's error page.
 */
const reachable = (settings: OidcSettings): Promise<boolean> =>
  fetch(`${settings.issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`, {
    mode: "no-cors",
    cache: "no-store",
    signal: AbortSignal.timeout(10_000)
  }).then(() => true, () => false)

/**
 * Sends the browser to the provider: authorization code with PKCE (S256), state and nonce. Fails,
 * staying here, when the provider cannot be reached.
 */
export const startSignIn = async (settings: OidcSettings, workspace: string | null): Promise<never> => {
  if (!(await reachable(settings))) {
    throw new Error(`The identity provider (${new URL(settings.issuer).host}) cannot be reached. Try again shortly, or ask whoever runs it.`)
  }
  const verifier = oauth.generateRandomCodeVerifier()
  const pending: Pending = { verifier, state: oauth.generateRandomState(), nonce: oauth.generateRandomNonce(), workspace }
  sessionStorage.setItem(pendingKey, JSON.stringify(pending))
  const url = new URL(settings.authorization_endpoint!)
  url.search = new URLSearchParams({
    client_id: settings.client_id,
    redirect_uri: redirectUri(),
    response_type: "code",
    scope: "openid email profile",
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state: pending.state,
    nonce: pending.nonce
  }).toString()
  location.assign(url)
  return new Promise<never>(() => {})
}

/** Whether this load is the provider sending the browser back (`?code=…&state=…` or `?error=…`). */
export const isCallback = () => {
  const params = new URLSearchParams(location.search)
  return params.has("state") && (params.has("code") || params.has("error"))
}

/**
 * Finishes the flow on the way back: checks the state, trades the code (with the PKCE verifier) for
 * tokens, checks the ID token's issuer, audience and nonce, and answers it with the workspace the
 * reader's invite named. The code leaves the address bar either way.
 */
export const finishSignIn = async (settings: OidcSettings): Promise<{ readonly idToken: string; readonly workspace: string | null }> => {
  const current = new URL(location.href)
  history.replaceState(null, "", `${location.pathname}${location.hash}`)
  const stored = sessionStorage.getItem(pendingKey)
  sessionStorage.removeItem(pendingKey)
  if (stored === null) throw new Error("This sign-in was not started here, or was already used: sign in again.")
  const pending = JSON.parse(stored) as Pending
  const server = serverOf(settings)
  const client: oauth.Client = { client_id: settings.client_id }
  const params = oauth.validateAuthResponse(server, client, current, pending.state)
  const response = await oauth.authorizationCodeGrantRequest(
    server,
    client,
    oauth.None(),
    params,
    redirectUri(),
    pending.verifier,
    insecure(settings)
  )
  const result = await oauth.processAuthorizationCodeResponse(server, client, response, {
    expectedNonce: pending.nonce,
    requireIdToken: true
  })
  if (result.id_token === undefined) throw new Error("The identity provider sent no ID token.")
  return { idToken: result.id_token, workspace: pending.workspace }
}
