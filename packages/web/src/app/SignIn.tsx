import { useEffect, useState } from "preact/hooks"
import type { WorkspaceId } from "@podium/domain/shared"
import { type Caller, CallFailed, closeSession, openSession, restoreSession, type SignedIn } from "./Client.ts"
import { finishSignIn, isCallback, type OidcSettings, startSignIn } from "./Oidc.ts"
import { Alert, Field, messageOf } from "./ui.tsx"

/**
 * A caller signed in by the web session `token` opens, once the server has accepted it in
 * `workspace` (the one an invite named, which the session's first request joins when the invite
 * is for the caller's address); a session that cannot act there is ended again.
 */
const accepted = async (token: string, workspace: string | undefined, onExpired: () => void): Promise<Caller> => {
  let signedIn = false
  let opened: SignedIn
  try {
    opened = await openSession(token, () => signedIn && onExpired())
  } catch (error) {
    if (error instanceof CallFailed && error.code === "unauthorized") {
      // the server's reason names JWT internals ("Invalid Compact JWS"): a person needs the gist
      throw new CallFailed(
        "unauthorized",
        "That is not a session token this Podium accepts: it may be mistyped, cut short, expired, or signed with " +
          "another secret. Paste the whole token again, or make a new one."
      )
    }
    throw error
  }
  if (workspace !== undefined) {
    try {
      await opened.call((c) => c.leaderboards.list({ query: { limit: 1, business_id: workspace as WorkspaceId } }))
    } catch (error) {
      await closeSession(opened.call).catch(() => undefined)
      if (error instanceof CallFailed && error.code === "forbidden") {
        throw new CallFailed("forbidden", "You are not a member of the workspace this invite is for: sign in with the address it was sent to.")
      }
      throw error
    }
  }
  signedIn = true
  return opened.call
}

/**
 * Picks up the web session the browser's cookie holds, so a reload keeps the reader signed in (and
 * on the same page: the route is the URL's hash). Not when the page brings an invite (whoever opens
 * it signs in as the invited address) or an identity provider's answer. True while it asks.
 */
export const useRestoredSession = (invited: boolean, onRestored: (call: Caller) => void, onExpired: () => void): boolean => {
  const [restoring, setRestoring] = useState(!invited && !isCallback())
  useEffect(() => {
    if (!restoring) return
    void restoreSession(onExpired)
      .then((restored) => {
        if (restored !== undefined) onRestored(restored.call)
      }, () => undefined)
      .finally(() => setRestoring(false))
  }, [])
  return restoring
}

/** What the page shows while it asks the server for the browser's session. */
export const Restoring = () => (
  <main class="sign-in">
    <p role="status">Loading…</p>
  </main>
)

/** Signs out: the server ends the session and clears its cookie (the page leaves it behind either way). */
export const signOut = (call: Caller): Promise<void> => closeSession(call).catch(() => undefined)

/**
 * Sign-in. With an OpenID Connect provider configured: its authorization-code flow with PKCE, whose
 * ID token opens the session. Without one (local use): the session token `podium dev-session`
 * prints. A provider that cannot be reached is said so here, before the browser would leave for
 * it. Either way the token is sent once, to open a web session the server keeps; the browser holds
 * only its HttpOnly cookie, which no script reads, and the token is not kept.
 */
export const SignIn = ({ oidc, invite, workspace, notice, onSignedIn, onExpired }: {
  readonly oidc: OidcSettings | null
  readonly invite: string | null
  /** The workspace an invite link named. */
  readonly workspace: string | undefined
  /** Why the reader is here again (the session ended). */
  readonly notice: string | undefined
  readonly onSignedIn: (call: Caller) => void
  /** Called when a signed-in call is refused as unauthenticated. */
  readonly onExpired: () => void
}) => {
  const [token, setToken] = useState("")
  const [error, setError] = useState<string | undefined>(oidc?.error)
  const [busy, setBusy] = useState(false)
  const attempt = async (signIn: () => Promise<Caller>) => {
    setBusy(true)
    setError(undefined)
    try {
      onSignedIn(await signIn())
    } catch (e) {
      setError(messageOf(e))
      setBusy(false)
    }
  }
  // back from the provider: finish its flow
  useEffect(() => {
    if (oidc !== null && oidc.error === undefined && isCallback()) {
      void attempt(async () => {
        const finished = await finishSignIn(oidc)
        return accepted(finished.idToken, finished.workspace ?? undefined, onExpired)
      })
    }
  }, [])
  const provider = oidc === null ? "" : new URL(oidc.issuer).host
  return (
    <main class="sign-in">
      <h1>Sign in to Podium</h1>
      {notice === undefined ? null : <p class="alert" role="alert">{notice}</p>}
      {invite === null ? null : <p class="note">You were invited to a workspace: sign in with the invited address to join it.</p>}
      {oidc !== null
        ? (
          <>
            <p>Podium signs you in with your organisation's identity provider ({provider}).</p>
            <Alert message={error} />
            <button type="button" disabled={busy || oidc.error !== undefined} onClick={() => void attempt(() => startSignIn(oidc, workspace ?? null))}>
              Sign in with {provider}
            </button>
          </>
        )
        : (
          <form onSubmit={(event) => {
            event.preventDefault()
            void attempt(() => accepted(token.trim(), workspace, onExpired))
          }}>
            <Field
              label="Session token"
              hint={<>Run <code>npm run --silent podium -- dev-session --email you@example.com</code> in the Podium checkout and paste what it prints.</>}
            >
              <textarea rows={4} value={token} onInput={(e) => setToken(e.currentTarget.value)} required autoComplete="off" spellcheck={false} />
            </Field>
            <Alert message={error} />
            <button type="submit" disabled={busy || token.trim() === ""}>Sign in</button>
          </form>
        )}
    </main>
  )
}
