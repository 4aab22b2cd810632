import { useState } from "preact/hooks"
import { type Caller, makeCaller } from "./Client.ts"
import { Alert, Field, messageOf } from "./ui.tsx"

/**
 * Local sign-in: the session token `podium dev-session` prints (a signed session JWT). It is
 * checked against the server before the app opens, and kept in memory only.
 */
export const SignIn = ({ invited, onSignedIn }: {
  readonly invited: boolean
  readonly onSignedIn: (call: Caller) => void
}) => {
  const [token, setToken] = useState("")
  const [error, setError] = useState<string | undefined>(undefined)
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      const call = await makeCaller(token.trim())
      await call((c) => c.leaderboards.list({ query: { limit: 1 } }))
      onSignedIn(call)
    } catch (e) {
      setError(messageOf(e))
    } finally {
      setBusy(false)
    }
  }
  return (
    <main class="sign-in">
      <h1>Sign in to Podium</h1>
      {invited ? <p class="note">You were invited to a workspace: sign in with the invited address to join it.</p> : null}
      <form onSubmit={submit}>
        <Field label="Session token" hint="Run `podium dev-session --email you@example.com` and paste what it prints.">
          <textarea rows={4} value={token} onInput={(e) => setToken(e.currentTarget.value)} required autoComplete="off" spellcheck={false} />
        </Field>
        <Alert message={error} />
        <button type="submit" disabled={busy || token.trim() === ""}>Sign in</button>
      </form>
    </main>
  )
}
