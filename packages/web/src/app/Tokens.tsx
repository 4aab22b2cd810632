import { type Scope, Scopes } from "@podium/domain/access"
import type { TokenId } from "@podium/domain/shared"
import { useState } from "preact/hooks"
import type { Caller } from "./Client.ts"
import { Alert, Field, formatDate, Loading, Page, Table, useAction, useLoad, useWorkspace } from "./ui.tsx"

/** The secret of a token just created: shown once, with a copy button; gone when the page is left. */
const Secret = ({ name, secret }: { readonly name: string; readonly secret: string }) => {
  const [copied, setCopied] = useState(false)
  return (
    <section class="card secret" aria-labelledby="secret-title">
      <h2 id="secret-title">Secret of “{name}”</h2>
      <p>Copy it now: Podium keeps only its hash and will not show it again.</p>
      <Field label="Token secret">
        <input readOnly value={secret} onFocus={(e) => e.currentTarget.select()} />
      </Field>
      <button type="button" onClick={() => void navigator.clipboard?.writeText(secret).then(() => setCopied(true))}>
        Copy secret
      </button>
      {copied ? <span role="status" class="note"> Copied.</span> : null}
    </section>
  )
}

export const TokensPage = ({ call }: { readonly call: Caller }) => {
  const workspace = useWorkspace()
  const list = useLoad(() => call((c) => c.tokens.list({ query: workspace })), [workspace.business_id])
  const [name, setName] = useState("")
  const [chosen, setChosen] = useState<ReadonlySet<Scope>>(new Set(["leaderboards:read", "leaderboards:inference"]))
  const [created, setCreated] = useState<{ name: string; secret: string } | undefined>(undefined)
  const create = useAction(async () => {
    const made = await call((c) => c.tokens.create({ payload: { ...workspace, name: name.trim(), scopes: [...chosen] } }))
    setCreated({ name: made.token.name, secret: made.secret })
    setName("")
    list.reload()
  })
  const revoke = useAction(async (id: TokenId) => {
    await call((c) => c.tokens.revoke({ params: { token_id: id } }))
    list.reload()
  })
  const toggle = (scope: Scope) =>
    setChosen((s) => {
      const next = new Set(s)
      if (!next.delete(scope)) next.add(scope)
      return next
    })
  return (
    <Page title="API tokens">
      {created === undefined ? null : <Secret name={created.name} secret={created.secret} />}
      <Alert message={list.error} />
      {list.value === undefined ? (list.error === undefined ? <Loading what="tokens" /> : null) : list.value.tokens.length === 0
        ? <p class="muted">No API tokens yet.</p>
        : (
          <Table caption="API tokens">
            <thead>
              <tr><th scope="col">Name</th><th scope="col">Starts with</th><th scope="col">Scopes</th><th scope="col">Status</th><th scope="col">Created by</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
            </thead>
            <tbody>
              {list.value.tokens.map((t) => (
                <tr key={t.id}>
                  <td>{t.name}</td>
                  <td><code>{t.prefix}…</code></td>
                  <td>{t.scopes.join(", ")}</td>
                  <td>{t.status}</td>
                  <td>{t.created_by === null ? "command line" : `${t.created_by_email ?? "a user without email"}${t.created_by_member === false ? " (left the workspace)" : ""}`}</td>
                  <td>{t.last_used_at === null ? "never" : formatDate(t.last_used_at)}</td>
                  <td>
                    {t.status === "active"
                      ? <button type="button" class="danger" onClick={() => void revoke.run(t.id)} aria-label={`Revoke ${t.name}`}>Revoke</button>
                      : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      <Alert message={revoke.error} />
      <form class="card" onSubmit={(e) => {
        e.preventDefault()
        void create.run()
      }}>
        <h2>New API token</h2>
        <Field label="Token name">
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={200} />
        </Field>
        <fieldset>
          <legend>Scopes</legend>
          <div class="scopes">
            {Scopes.map((scope) => (
              <label key={scope} class="choice">
                <input type="checkbox" checked={chosen.has(scope)} onChange={() => toggle(scope)} />
                {scope}
              </label>
            ))}
          </div>
        </fieldset>
        <Alert message={create.error} />
        <button type="submit" disabled={create.busy || name.trim() === "" || chosen.size === 0}>Create token</button>
      </form>
    </Page>
  )
}
