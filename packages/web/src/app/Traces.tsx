import type { LeaderboardId } from "@podium/domain/leaderboards"
import { useState } from "preact/hooks"
import type { Caller } from "./Client.ts"
import { Alert, Field, formatDate, Loading, Page, Table, useLoad, usd } from "./ui.tsx"

type Source = "" | "run" | "inference" | "dataset" | "manual" | "fine_tune"

const excerpt = (value: unknown) => {
  const text = typeof value === "string" ? value : value === null || value === undefined ? "" : JSON.stringify(value)
  return text.length > 160 ? `${text.slice(0, 159)}…` : text
}

/** Every call and row the leaderboard recorded, newest pages by cursor, filtered by source and run. */
export const TracesPage = ({ call, leaderboardId }: { readonly call: Caller; readonly leaderboardId: string }) => {
  const id = leaderboardId as LeaderboardId
  const [source, setSource] = useState<Source>("")
  const [runId, setRunId] = useState("")
  const [cursors, setCursors] = useState<ReadonlyArray<string>>([])
  const cursor = cursors.at(-1)
  const validRun = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(runId.trim())
  const page = useLoad(
    () =>
      call((c) =>
        c.traces.export({
          params: { leaderboard_id: id },
          query: {
            format: "json",
            limit: 50,
            ...(source === "" ? {} : { source }),
            ...(validRun ? { run_id: runId.trim() } : {}),
            ...(cursor === undefined ? {} : { cursor })
          }
        })
      ),
    [id, source, validRun ? runId : "", cursor]
  )
  const list = page.value !== undefined && typeof page.value !== "string" ? page.value : undefined
  // candidates by name; a trace of a removed candidate (or of none: a dataset row) says so
  const board = useLoad(() => call((c) => c.leaderboards.get({ params: { leaderboard_id: id } })), [id])
  const names = new Map((board.value?.models ?? []).map((m) => [m.id as string, m.name]))
  const candidate = (value: unknown) =>
    typeof value !== "string" ? "—" : names.get(value) ?? (board.value === undefined ? "…" : "a removed candidate")
  return (
    <Page title="Traces" actions={<a class="button secondary" href={`#/leaderboards/${id}`}>Leaderboard</a>}>
      <div class="row">
        <Field label="Source">
          <select value={source} onChange={(e) => {
            setSource(e.currentTarget.value as Source)
            setCursors([])
          }}>
            <option value="">All</option>
            <option value="inference">Inference</option>
            <option value="run">Runs</option>
            <option value="dataset">Dataset rows</option>
            <option value="manual">Human evaluation</option>
            <option value="fine_tune">Fine-tuning</option>
          </select>
        </Field>
        <Field label="Run id" hint="Only the traces of this run.">
          <input value={runId} onInput={(e) => {
            setRunId(e.currentTarget.value)
            setCursors([])
          }} />
        </Field>
      </div>
      <Alert message={page.error} />
      {list === undefined ? (page.error === undefined ? <Loading what="traces" /> : null) : list.rows.length === 0
        ? <p class="muted">No traces here.</p>
        : (
          <Table caption="Traces">
            <thead>
              <tr><th scope="col">Time</th><th scope="col">Source</th><th scope="col">Candidate</th><th scope="col">Status</th><th scope="col">Input</th><th scope="col">Output</th><th scope="col">Latency</th><th scope="col">Cost</th></tr>
            </thead>
            <tbody>
              {list.rows.map((row) => {
                const r = row as Record<string, unknown>
                return (
                  <tr key={String(r["id"])}>
                    <td>{typeof r["created_at"] === "string" ? formatDate(r["created_at"]) : ""}</td>
                    <td>{String(r["source"] ?? "")}</td>
                    <td>{candidate(r["leaderboard_model_id"])}</td>
                    <td>{String(r["status"] ?? "")}</td>
                    <td class="text">{excerpt(r["input"] ?? r["messages"])}</td>
                    <td class="text">{excerpt(r["error"] ?? r["output"])}</td>
                    <td>{typeof r["latency_ms"] === "number" ? `${Math.round(r["latency_ms"])} ms` : "—"}</td>
                    <td>{usd(typeof r["cost_usd"] === "number" ? r["cost_usd"] : null)}</td>
                  </tr>
                )
              })}
            </tbody>
          </Table>
        )}
      <div class="row">
        <button type="button" class="secondary" disabled={cursors.length === 0} onClick={() => setCursors((c) => c.slice(0, -1))}>Previous page</button>
        <button type="button" class="secondary" disabled={list?.next_cursor == null}
          onClick={() => list?.next_cursor != null && setCursors((c) => [...c, list.next_cursor!])}>Next page</button>
      </div>
    </Page>
  )
}
