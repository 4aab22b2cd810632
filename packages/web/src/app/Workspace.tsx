import type { MailStatus } from "@podium/domain/access"
import type { InviteId, UserId, WorkspaceId } from "@podium/domain/shared"
import { useEffect, useState } from "preact/hooks"
import type { Caller } from "./Client.ts"
import { Alert, Field, formatDate, Loading, Page, Table, useAction, useLoad, useWorkspace } from "./ui.tsx"

/** An invite mail's status in words: `logged` means no mail server, so nobody received it. */
const mailLabel = (status: MailStatus) => status === "logged" ? "logged, no SMTP" : status

/** What became of the mail of the invite just made, beside its link. */
const mailNote: Record<MailStatus, string> = {
  queued: "its mail is on its way",
  sent: "its mail was sent",
  logged: "its mail was logged, no SMTP (pass the link on yourself)",
  failed: "its mail failed (pass the link on yourself)",
  skipped: "its mail was not sent"
}

/** Invites: who is invited, and the link they were mailed (also shown here to pass on by hand). */
const Members = ({ call }: { readonly call: Caller }) => {
  const workspace = useWorkspace()
  const list = useLoad(() => call((c) => c.invites.list({ query: workspace })), [workspace.business_id])
  const [email, setEmail] = useState("")
  const [role, setRole] = useState<"member" | "admin">("member")
  const [made, setMade] = useState<{ readonly id: InviteId; readonly link: string } | undefined>(undefined)
  // a first delivery takes a moment: look again until none is waiting for it
  const firstDelivery = list.value?.invites.some((i) => i.status === "pending" && i.mail.status === "queued" && i.mail.attempts === 0)
  useEffect(() => {
    if (firstDelivery !== true) return
    const timer = setTimeout(list.reload, 1_000)
    return () => clearTimeout(timer)
  }, [list.value])
  const madeMail = list.value?.invites.find((i) => i.id === made?.id)?.mail.status ?? "queued"
  const invite = useAction(async () => {
    const answer = await call((c) => c.invites.invite({ payload: { ...workspace, email: email.trim(), role } }))
    setMade({ id: answer.invite.id, link: answer.accept_url })
    setEmail("")
    list.reload()
  })
  const remove = useAction(async (businessId: WorkspaceId, who: { user_id: UserId } | { invite_id: InviteId }) => {
    await call((c) => c.invites.remove({ payload: { business_id: businessId, ...who } }))
    list.reload()
  })
  const value = list.value
  return (
    <section>
      <h2>Members</h2>
      <Alert message={list.error} />
      {value === undefined ? (list.error === undefined ? <Loading what="members" /> : null) : (
        <>
          <Table caption="Members">
            <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Joined</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {value.members.map((m) => (
                <tr key={m.user_id}>
                  <td>{m.email ?? m.user_id}</td>
                  <td>{m.role}</td>
                  <td>{formatDate(m.joined_at)}</td>
                  <td>
                    {m.role === "owner" ? null : (
                      <button type="button" class="danger" aria-label={`Remove ${m.email ?? m.user_id}`}
                        onClick={() => void remove.run(value.business_id, { user_id: m.user_id })}>Remove</button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
          {value.invites.length === 0 ? null : (
            <>
            <h3>Invites</h3>
            <Table caption="Invites">
              <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Mail</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                {value.invites.map((i) => (
                  <tr key={i.id}>
                    <td>{i.email}</td>
                    <td>{i.role}</td>
                    <td>{i.status}</td>
                    <td>{mailLabel(i.mail.status)}{i.mail.last_error === null ? "" : ` (${i.mail.last_error})`}</td>
                    <td>{formatDate(i.expires_at)}</td>
                    <td>
                      {i.status === "pending" ? (
                        <button type="button" class="danger" aria-label={`Revoke the invite of ${i.email}`}
                          onClick={() => void remove.run(value.business_id, { invite_id: i.id })}>Revoke</button>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </Table>
            </>
          )}
        </>
      )}
      <Alert message={remove.error} />
      <form class="card" onSubmit={(e) => {
        e.preventDefault()
        void invite.run()
      }}>
        <h2>Invite someone</h2>
        <div class="row">
          <Field label="Email">
            <input type="email" value={email} onInput={(e) => setEmail(e.currentTarget.value)} required />
          </Field>
          <Field label="Role">
            <select value={role} onChange={(e) => setRole(e.currentTarget.value as "member" | "admin")}>
              <option value="member">Member</option>
              <option value="admin">Admin</option>
            </select>
          </Field>
        </div>
        <Alert message={invite.error} />
        {made === undefined ? null : (
          <p class="note" role="status">Invite made: {mailNote[madeMail]}. Its link: <a href={made.link}>{made.link}</a></p>
        )}
        <button type="submit" disabled={invite.busy || email.trim() === ""}>Send invite</button>
      </form>
    </section>
  )
}

/** A provider token checked with the provider, then stored encrypted for the workspace. */
const Integrations = ({ call }: { readonly call: Caller }) => {
  const [provider, setProvider] = useState<"router" | "hub">("router")
  const [token, setToken] = useState("")
  const [stored, setStored] = useState<string | undefined>(undefined)
  const workspace = useWorkspace()
  const validate = useAction(async () => {
    setStored(undefined)
    const result = await call((c) => c.integrations.validate({ payload: { ...workspace, provider, token } }))
    setToken("")
    setStored(`The ${result.provider} token is valid${result.account.label === null ? "" : ` (${result.account.label})`} and stored.`)
  })
  return (
    <form class="card" onSubmit={(e) => {
      e.preventDefault()
      void validate.run()
    }}>
      <h2>Provider integrations</h2>
      <p class="muted">A token for the router or the hub, used by candidates and judges that have none of their own.</p>
      <div class="row">
        <Field label="Provider">
          <select value={provider} onChange={(e) => setProvider(e.currentTarget.value as "router" | "hub")}>
            <option value="router">Router</option>
            <option value="hub">Hub</option>
          </select>
        </Field>
        <Field label="Provider token" hint="Checked with the provider, stored encrypted, never shown again.">
          <input type="password" value={token} onInput={(e) => setToken(e.currentTarget.value)} required autoComplete="off" />
        </Field>
      </div>
      <Alert message={validate.error} />
      {stored === undefined ? null : <p class="note" role="status">{stored}</p>}
      <button type="submit" disabled={validate.busy || token === ""}>Validate and store</button>
    </form>
  )
}

export const WorkspacePage = ({ call }: { readonly call: Caller }) => (
  <Page title="Workspace">
    <Members call={call} />
    <Integrations call={call} />
  </Page>
)
