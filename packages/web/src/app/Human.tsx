import type { CaseId, DocumentId } from "@podium/domain/human"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { useState } from "preact/hooks"
import type { Caller } from "./Client.ts"
import {
  Alert,
  bytesLabel,
  count,
  Field,
  formatDate,
  IntervalChart,
  Loading,
  Page,
  percent,
  saveFile,
  Table,
  useAction,
  useLoad,
  usd
} from "./ui.tsx"

/** A version 4 UUID; `crypto.randomUUID` exists only in secure contexts, `getRandomValues` everywhere. */
export const newId = (): string => {
  const b = crypto.getRandomValues(new Uint8Array(16))
  b[6] = (b[6]! & 0x0f) | 0x40
  b[8] = (b[8]! & 0x3f) | 0x80
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("")
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/** Uploads files as documents of `scope`; answers their ids in order. */
const upload = async (call: Caller, leaderboardId: LeaderboardId, files: ReadonlyArray<File>, scope: "case" | "shared") => {
  const ids: Array<DocumentId> = []
  for (const file of files) {
    const id = newId() as DocumentId
    const data = new Uint8Array(await file.arrayBuffer())
    await call((c) =>
      c.human.uploadDocument({ params: { leaderboard_id: leaderboardId }, payload: { id, name: file.name, scope, data } })
    )
    ids.push(id)
  }
  return ids
}

/** Shared documents: every new case gets a copy of them. */
const SharedDocuments = ({ call, leaderboardId }: { readonly call: Caller; readonly leaderboardId: LeaderboardId }) => {
  const list = useLoad(() => call((c) => c.human.documents({ params: { leaderboard_id: leaderboardId } })), [leaderboardId])
  const [files, setFiles] = useState<ReadonlyArray<File>>([])
  const add = useAction(async (form: HTMLFormElement) => {
    await upload(call, leaderboardId, files, "shared")
    form.reset()
    setFiles([])
    list.reload()
  })
  const archive = useAction(async (id: DocumentId) => {
    await call((c) => c.human.archiveDocument({ params: { leaderboard_id: leaderboardId, document_id: id } }))
    list.reload()
  })
  return (
    <details class="card">
      <summary>Shared documents</summary>
      <p class="muted">Text, Markdown, CSV, JSON or PDF files every new case includes (for instance a policy the answers must follow).</p>
      {list.value === undefined || list.value.documents.length === 0 ? <p class="muted">No shared documents.</p> : (
        <Table caption="Shared documents">
          <thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Size</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {list.value.documents.map((d) => (
              <tr key={d.id}>
                <td>{d.name}</td>
                <td>{d.media_type}</td>
                <td>{bytesLabel(d.size_bytes)}</td>
                <td><button type="button" class="danger" aria-label={`Archive ${d.name}`} onClick={() => void archive.run(d.id)}>Archive</button></td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <Alert message={list.error ?? archive.error} />
      <form onSubmit={(e) => {
        e.preventDefault()
        void add.run(e.currentTarget)
      }}>
        <Field label="Files to share">
          <input type="file" multiple accept=".txt,.md,.csv,.json,.pdf" onChange={(e) => setFiles([...(e.currentTarget.files ?? [])])} />
        </Field>
        <Alert message={add.error} />
        <button type="submit" disabled={add.busy || files.length === 0}>Upload shared documents</button>
      </form>
    </details>
  )
}

const reviewLabel = { none: "Not reviewed", draft: "Draft review", confirmed: "Confirmed" } as const

export const HumanPage = ({ call, leaderboardId }: { readonly call: Caller; readonly leaderboardId: string }) => {
  const id = leaderboardId as LeaderboardId
  const summary = useLoad(() => call((c) => c.human.summary({ params: { leaderboard_id: id }, query: {} })), [id])
  const [input, setInput] = useState("")
  const [context, setContext] = useState("")
  const [override, setOverride] = useState<string | null>(null)
  const [files, setFiles] = useState<ReadonlyArray<File>>([])
  const create = useAction(async () => {
    const attachments = await upload(call, id, files, "case")
    const created = await call((c) =>
      c.human.createCase({
        params: { leaderboard_id: id },
        payload: {
          id: newId() as CaseId,
          input,
          ...(context.trim() === "" ? {} : { context }),
          ...(override === null ? {} : { prompt_override: override }),
          ...(attachments.length === 0 ? {} : { attachment_ids: attachments })
        }
      })
    )
    location.hash = `#/leaderboards/${id}/human/${created.id}`
  })
  const exported = useAction(async () => {
    const rows = await call((c) => c.human.export({ params: { leaderboard_id: id } }))
    saveFile(`human-evaluation-${id}.json`, JSON.stringify(rows, null, 2), "application/json")
  })
  const value = summary.value
  return (
    <Page
      title="Human evaluation"
      actions={
        <span class="row">
          <button type="button" class="secondary" disabled={exported.busy} onClick={() => void exported.run()}>Download export</button>
          <a class="button secondary" href={`#/leaderboards/${id}`}>Leaderboard</a>
        </span>
      }
    >
      <Alert message={summary.error ?? exported.error} />
      {value === undefined ? (summary.error === undefined ? <Loading what="the summary" /> : null) : (
        <>
          <p class="stats">
            <span>{count(value.total, "case")}</span>
            <span>{value.pending} pending review</span>
            <span>{value.ranking.confirmed} confirmed</span>
            {value.next_pending_case === null ? null : (
              <a class="button" href={`#/leaderboards/${id}/human/${value.next_pending_case}`}>Review next pending case</a>
            )}
          </p>
          <h2>Ranking</h2>
          {value.ranking.rows.every((r) => r.total === 0) ? <p class="muted">No confirmed verdicts yet.</p> : (
            <>
              <Table caption="Ranking">
                <thead>
                  <tr><th scope="col">Rank</th><th scope="col">Candidate</th><th scope="col">Score</th><th scope="col">95% interval</th><th scope="col">Correct</th><th scope="col">Average cost</th></tr>
                </thead>
                <tbody>
                  {value.ranking.rows.map((r) => (
                    <tr key={r.leaderboard_model_id}>
                      <td>{r.rank ?? "—"}</td>
                      <td>{r.name}</td>
                      <td>{percent(r.score)}</td>
                      <td>{r.score_low === null ? "—" : `${percent(r.score_low)} – ${percent(r.score_high)}`}</td>
                      <td>{r.correct} of {r.total}</td>
                      <td>{usd(r.average_cost_usd)}</td>
                    </tr>
                  ))}
                </tbody>
              </Table>
              <IntervalChart
                label="Human review scores"
                rows={value.ranking.rows.map((r) => ({ name: r.name, score: r.score, low: r.score_low, high: r.score_high }))}
              />
            </>
          )}
          <h2>Cases</h2>
          {value.cases.length === 0 ? <p class="muted">No cases yet.</p> : (
            <Table caption="Cases">
              <thead>
                <tr><th scope="col">Input</th><th scope="col">Status</th><th scope="col">Review</th><th scope="col">Updated</th></tr>
              </thead>
              <tbody>
                {value.cases.map((c) => (
                  <tr key={c.id}>
                    <td><a href={`#/leaderboards/${id}/human/${c.id}`}>{c.input}</a></td>
                    <td>{c.status}{c.current ? "" : " (earlier configuration)"}</td>
                    <td>{reviewLabel[c.review_state]}</td>
                    <td>{formatDate(c.updated_at)}</td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
        </>
      )}
      <SharedDocuments call={call} leaderboardId={id} />
      <form class="card" onSubmit={(e) => {
        e.preventDefault()
        void create.run()
      }}>
        <h2>New case</h2>
        <Field label="Input" hint="What the candidates are asked.">
          <textarea rows={4} value={input} onInput={(e) => setInput(e.currentTarget.value)} required />
        </Field>
        <Field label="Context" hint="Optional background the candidates get with the input.">
          <textarea rows={3} value={context} onInput={(e) => setContext(e.currentTarget.value)} />
        </Field>
        <Field label="Attachments" hint="Files for this case only; shared documents are added too.">
          <input type="file" multiple accept=".txt,.md,.csv,.json,.pdf" onChange={(e) => setFiles([...(e.currentTarget.files ?? [])])} />
        </Field>
        <label class="choice check">
          <input type="checkbox" checked={override !== null} onChange={(e) => setOverride(e.currentTarget.checked ? (value?.default_prompt ?? "") : null)} />
          Use another prompt for this case
        </label>
        {override === null ? null : (
          <Field label="Prompt for this case" hint="Replaces the leaderboard's prompt for this case only.">
            <textarea rows={3} value={override} onInput={(e) => setOverride(e.currentTarget.value)} />
          </Field>
        )}
        <Alert message={create.error} />
        <button type="submit" disabled={create.busy || input.trim() === ""}>Create case</button>
      </form>
    </Page>
  )
}
