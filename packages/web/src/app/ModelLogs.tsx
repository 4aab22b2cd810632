import type { InferenceLogView } from "@podium/adapters-http/models/ModelServingApi"
import type { ModelId } from "@podium/domain/models"
import { useEffect, useRef, useState } from "preact/hooks"
import { type Caller, CallFailed } from "./Client.ts"
import { Alert, Field, formatDate, Loading, Table, useAction, useInterval, useLoad, usd } from "./ui.tsx"

type Log = typeof InferenceLogView.Type

interface Delivery {
  readonly status: "pending" | "delivered" | "failed"
  readonly attempts: number
  readonly last_status_code: number | null
  readonly last_error: string | null
  readonly delivered_at: string | null
}

const deliveryOf = (log: Log) => log.metadata["webhook_delivery"] as Delivery | undefined

const attempts = (n: number) => `${n} ${n === 1 ? "attempt" : "attempts"}`

/** A log's webhook delivery in words: delivered, still trying (and why), or given up (and why). */
const DeliveryStatus = ({ log }: { readonly log: Log }) => {
  const delivery = deliveryOf(log)
  if (delivery === undefined) return <span class="muted">not sent</span>
  const why = delivery.last_error ?? (delivery.last_status_code === null ? null : `answered ${delivery.last_status_code}`)
  if (delivery.status === "delivered") {
    return <span class="note">delivered<span class="band">{attempts(delivery.attempts)}, answered {delivery.last_status_code}</span></span>
  }
  if (delivery.status === "pending") return <>retrying<span class="band">{attempts(delivery.attempts)}{why === null ? "" : `: ${why}`}</span></>
  return <span class="alert">failed<span class="band">{attempts(delivery.attempts)}{why === null ? "" : `: ${why}`}</span></span>
}

/** The text of a message list's last message of `role` (content as a string, or its text parts). */
const textOf = (record: Readonly<Record<string, unknown>>, role: string): string => {
  const messages = record["messages"]
  if (!Array.isArray(messages)) return ""
  const message = (messages as Array<{ role?: unknown; content?: unknown }>).findLast((m) => m.role === role)
  const content = message?.content
  if (typeof content === "string") return content
  if (Array.isArray(content)) {
    return content.map((p: { type?: unknown; text?: unknown }) => p.type === "text" && typeof p.text === "string" ? p.text : "").join(" ")
  }
  return ""
}

const excerpt = (text: string) => text.length > 200 ? `${text.slice(0, 199)}…` : text

const logsPage = 20

/** The secret of a webhook just set: shown once, with what it is for and a copy button. */
const Secret = ({ secret, onDismiss }: { readonly secret: string; readonly onDismiss: () => void }) => {
  const [copied, setCopied] = useState(false)
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => heading.current?.focus(), [secret])
  return (
    <section class="card secret" aria-labelledby="webhook-secret-title">
      <h3 id="webhook-secret-title" tabIndex={-1} ref={heading}>Signing secret</h3>
      <p>
        <strong>Copy it now: Podium shows it only this once.</strong> Your receiver checks each delivery's
        <code> webhook-signature</code> with it (Standard Webhooks). If it is lost, rotate it to get a new one.
      </p>
      <Field label="Webhook signing secret">
        <input readOnly value={secret} onFocus={(e) => e.currentTarget.select()} />
      </Field>
      <div class="row">
        <button type="button" onClick={() => void navigator.clipboard?.writeText(secret).then(() => setCopied(true))}>Copy secret</button>
        <button type="button" class="secondary" onClick={onDismiss}>I have kept it</button>
      </div>
      {copied ? <p role="status" class="note">Copied.</p> : null}
    </section>
  )
}

/**
 * The model's `model.inference` webhook: set it (a new URL makes a new secret, shown once), turn it
 * on or off, rotate the secret (the new one shown once), or remove it.
 */
const WebhookSection = ({ call, modelId, onChanged }: {
  readonly call: Caller
  readonly modelId: ModelId
  readonly onChanged: (enabled: boolean) => void
}) => {
  const params = { model_id: modelId }
  const current = useLoad(async () => {
    try {
      return await call((c) => c.modelLogs.getWebhook({ params }))
    } catch (error) {
      // none set is a 404 of its own
      if (error instanceof CallFailed && error.code === "not_found") return null
      throw error
    }
  }, [modelId])
  const webhook = current.value
  useEffect(() => onChanged(webhook?.enabled ?? false), [webhook])
  const [url, setUrl] = useState("")
  useEffect(() => setUrl(webhook?.webhook_url ?? ""), [webhook?.webhook_url])
  const [secret, setSecret] = useState<string | undefined>(undefined)
  const [note, setNote] = useState<string | undefined>(undefined)
  const [rotating, setRotating] = useState(false)
  const configure = (payload: { readonly webhook_url?: string | null; readonly enabled?: boolean; readonly rotate_secret?: boolean }) =>
    call((c) => c.modelLogs.patchWebhook({ params, payload }))
  const done = (message: string, made?: string) => {
    setSecret(made)
    setNote(message)
    setRotating(false)
    current.reload()
  }
  const save = useAction(async () => {
    setNote(undefined)
    const answer = await configure({ webhook_url: url.trim(), enabled: webhook?.enabled ?? true })
    done(answer.secret === undefined ? "Webhook saved." : "Webhook set: copy its signing secret now.", answer.secret)
  })
  const toggle = useAction(async (enabled: boolean) => {
    await configure({ enabled })
    done(enabled ? "Deliveries are on." : "Deliveries are off: new logs are not sent.")
  })
  const rotate = useAction(async () => {
    if (webhook == null) return
    const answer = await configure({ rotate_secret: true })
    done("Secret rotated: deliveries are signed with the new one from now on.", answer.secret)
  })
  const remove = useAction(async () => {
    await configure({ webhook_url: null })
    setUrl("")
    done("Webhook removed: no more deliveries.")
  })
  const error = save.error ?? toggle.error ?? rotate.error ?? remove.error
  return (
    <section aria-labelledby="webhook-heading">
      <h2 id="webhook-heading">Webhook</h2>
      <p class="muted">
        Every inference log can be posted to a URL of yours as <code>model.inference</code>, signed, and retried (8 attempts) until it
        answers 2xx. The logs' Webhook column says how each delivery went.
      </p>
      <Alert message={current.error} />
      {note === undefined ? null : <p class="note" role="status">{note}</p>}
      {secret === undefined ? null : <Secret secret={secret} onDismiss={() => setSecret(undefined)} />}
      {webhook === undefined ? (current.error === undefined ? <Loading what="the webhook" /> : null) : (
        <div class="card">
          {webhook === null ? <p>No webhook is set.</p> : (
            <dl class="facts stack-narrow">
              <dt>Sends to</dt>
              <dd><code class="wrap">{webhook.webhook_url}</code></dd>
              <dt>Deliveries</dt>
              <dd>{webhook.enabled ? "on" : "off"}</dd>
              <dt>Secret made</dt>
              <dd>{formatDate(webhook.secret_created_at)}</dd>
            </dl>
          )}
          <form onSubmit={(e) => {
            e.preventDefault()
            void save.run()
          }}>
            <Field label="Webhook URL" hint="An https address without credentials; a new address gets a new secret.">
              <input type="url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} required placeholder="https://example.com/hooks/podium" />
            </Field>
            <div class="row">
              <button type="submit" disabled={save.busy || url.trim() === "" || url.trim() === webhook?.webhook_url}>
                {webhook === null ? "Set webhook" : "Change URL"}
              </button>
              {webhook === null ? null : (
                <>
                  <button type="button" class="secondary" disabled={toggle.busy} onClick={() => void toggle.run(!webhook.enabled)}>
                    {webhook.enabled ? "Turn deliveries off" : "Turn deliveries on"}
                  </button>
                  <button type="button" class="secondary" aria-expanded={rotating} onClick={() => setRotating(true)}>Rotate secret</button>
                  <button type="button" class="danger" disabled={remove.busy} onClick={() => void remove.run()}>Remove webhook</button>
                </>
              )}
            </div>
          </form>
          {rotating && webhook !== null
            ? (
              <div class="confirm" role="group" aria-label="Rotate the signing secret?">
                <p>
                  The old secret stops at once: give your receiver the new one (shown once). Deliveries from then on are
                  signed with the new one.
                </p>
                <div class="row">
                  <button type="button" disabled={rotate.busy} onClick={() => void rotate.run()}>Confirm rotation</button>
                  <button type="button" class="secondary" onClick={() => setRotating(false)}>Cancel</button>
                </div>
              </div>
            )
            : null}
          <Alert message={error} />
        </div>
      )}
    </section>
  )
}

/** The model's inference logs (newest first, pages by cursor) and its webhook, with each log's delivery. */
export const ModelLogsSections = ({ call, modelId, names }: {
  readonly call: Caller
  readonly modelId: ModelId
  readonly names: ReadonlyMap<string, string>
}) => {
  // the cursors of the pages before this one: previous pops, next pushes
  const [cursors, setCursors] = useState<ReadonlyArray<string>>([])
  const cursor = cursors.at(-1)
  const [round, setRound] = useState(0)
  const page = useLoad(
    () =>
      call((c) =>
        c.modelLogs.logs({
          params: { model_id: modelId },
          query: { limit: logsPage, ...(cursor === undefined ? {} : { cursor }) }
        })
      ),
    [modelId, cursor, round]
  )
  const [webhookOn, setWebhookOn] = useState(false)
  const logs = page.value?.logs ?? []
  // deliveries under way (or about to be) change the page: look again until they have settled
  const settling = logs.some((l) => deliveryOf(l)?.status === "pending" || (webhookOn && deliveryOf(l) === undefined))
  useInterval(page.reload, 2000, settling)
  return (
    <>
      <section aria-labelledby="logs-heading">
        <h2 id="logs-heading">Inference logs</h2>
        <p class="muted">Every call of the model, newest first; written a moment after the call.</p>
        <div class="row">
          <button type="button" class="secondary" onClick={() => setRound((n) => n + 1)}>Refresh logs</button>
        </div>
        <Alert message={page.error} />
        {page.value === undefined ? (page.error === undefined ? <Loading what="inference logs" /> : null) : logs.length === 0
          ? <p class="muted">{cursors.length === 0 ? "No calls yet." : "No older calls."}</p>
          : (
            <Table caption="Inference logs">
              <thead>
                <tr>
                  <th scope="col">Time</th><th scope="col">Input</th><th scope="col">Output</th><th scope="col">Status</th>
                  <th scope="col">Webhook</th><th scope="col">Version</th><th scope="col">Latency</th><th scope="col">Cost</th>
                </tr>
              </thead>
              <tbody>
                {logs.map((log) => {
                  const m = log.metadata
                  const version = typeof m["version_id"] === "string" ? names.get(m["version_id"]) ?? "a version" : "—"
                  return (
                    <tr key={log.id}>
                      <td>{formatDate(log.timestamp)}</td>
                      <td class="text">{excerpt(textOf(log.input_message, "user"))}</td>
                      <td class="text">{excerpt(textOf(log.output_messages, "assistant"))}</td>
                      <td>{String(m["status"] ?? "—")}</td>
                      <td><DeliveryStatus log={log} /></td>
                      <td>{version}</td>
                      <td>{typeof m["latency_ms"] === "number" ? `${Math.round(m["latency_ms"])} ms` : "—"}</td>
                      <td>{usd(typeof m["cost_usd"] === "number" ? m["cost_usd"] : null)}</td>
                    </tr>
                  )
                })}
              </tbody>
            </Table>
          )}
        {cursors.length === 0 && page.value?.next_cursor == null ? null : (
        <nav class="row" aria-label="Inference log pages">
          <button type="button" class="secondary" disabled={cursors.length === 0} onClick={() => setCursors((c) => c.slice(0, -1))}>
            Newer logs
          </button>
          <button type="button" class="secondary" disabled={page.value?.next_cursor == null}
            onClick={() => {
              const next = page.value?.next_cursor
              if (next != null) setCursors((c) => [...c, next])
            }}>
            Older logs
          </button>
        </nav>
        )}
      </section>
      <WebhookSection call={call} modelId={modelId} onChanged={setWebhookOn} />
    </>
  )
}
