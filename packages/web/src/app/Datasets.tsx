import type { LeaderboardId } from "@podium/domain/leaderboards"
import { useState } from "preact/hooks"
import type { Caller } from "./Client.ts"
import { Alert, count, Field, formatDate, Loading, Page, saveFile, Table, useAction, useInterval, useLoad } from "./ui.tsx"

const limitLabel = (l: { readonly used: number; readonly limit: number | null }) =>
  l.limit === null ? `${l.used} (no limit)` : `${l.used} of ${l.limit}`

/** A PUSH dataset: what waits, its versions (each downloadable), push tokens and consolidation. */
export const DatasetPage = ({ call, leaderboardId }: { readonly call: Caller; readonly leaderboardId: string }) => {
  const id = leaderboardId as LeaderboardId
  const status = useLoad(() => call((c) => c.pushDatasets.status({ params: { leaderboard_id: id } })), [id])
  const labelling = status.value?.labelling?.status === "running"
  useInterval(status.reload, 1000, labelling)
  const [secret, setSecret] = useState<string | undefined>(undefined)
  const consolidate = useAction(async () => {
    await call((c) => c.datasetAdmin.consolidate({ params: { leaderboard_id: id } }))
    status.reload()
  })
  const token = useAction(async () => {
    const issued = await call((c) => c.datasetAdmin.issueToken({ params: { leaderboard_id: id }, payload: { name: "web app" } }))
    setSecret(issued.secret)
  })
  const labels = useAction(async () => {
    await call((c) => c.datasetAdmin.autoLabels({ params: { leaderboard_id: id } }))
    status.reload()
  })
  const download = useAction(async (version: number) => {
    const text = await call((c) => c.pushDatasets.download({ params: { leaderboard_id: id }, query: { version } }))
    saveFile(`dataset-${id}-v${version}.jsonl`, text, "application/jsonl")
  })
  const value = status.value
  return (
    <Page title="Dataset" actions={<a class="button secondary" href={`#/leaderboards/${id}`}>Leaderboard</a>}>
      <Alert message={status.error} />
      {value === undefined ? (status.error === undefined ? <Loading what="the dataset" /> : null) : (
        <>
          <p class="stats">
            <span>{count(value.consolidation.pending_events, "row")} pending</span>
            <span>today {limitLabel(value.limits.daily)}</span>
            <span>this month {limitLabel(value.limits.monthly)}</span>
          </p>
          <p class="muted">Push rows to <code>{value.push_url}</code> with an API token or a push token.</p>
          <div class="row">
            <button type="button" disabled={consolidate.busy || value.consolidation.pending_events === 0} onClick={() => void consolidate.run()}>
              Consolidate now
            </button>
            <button type="button" class="secondary" disabled={token.busy} onClick={() => void token.run()}>Create a push token</button>
            <button type="button" class="secondary" disabled={labels.busy || labelling || value.latest_version === null} onClick={() => void labels.run()}>
              Label rows without a reference
            </button>
          </div>
          <Alert message={consolidate.error ?? token.error ?? labels.error ?? download.error} />
          {secret === undefined ? null : (
            <section class="card secret">
              <Field label="Push token" hint="Send it as the X-Service-Push-Token header. Shown this once.">
                <input readOnly value={secret} onFocus={(e) => e.currentTarget.select()} />
              </Field>
            </section>
          )}
          {value.labelling === null ? null : (
            <p>
              Labelling: {value.labelling.status}, {value.labelling.labelled} of {value.labelling.total} labelled
              {value.labelling.failed > 0 ? `, ${value.labelling.failed} failed` : ""}
              {value.labelling.error === null ? "" : ` (${value.labelling.error})`}
            </p>
          )}
          <h2>Versions</h2>
          {value.versions.length === 0 ? <p class="muted">No version yet: consolidate the pending rows to make the first.</p> : (
            <Table caption="Dataset versions">
              <thead>
                <tr><th scope="col">Version</th><th scope="col">Rows</th><th scope="col">Added</th><th scope="col">Duplicates dropped</th><th scope="col">Made by</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
              </thead>
              <tbody>
                {value.versions.map((v) => (
                  <tr key={v.version}>
                    <td>{v.version}</td>
                    <td>{v.row_count}</td>
                    <td>{v.added_rows}</td>
                    <td>{v.dropped_duplicates}</td>
                    <td>{v.trigger}</td>
                    <td>{formatDate(v.created_at)}</td>
                    <td>
                      <button type="button" class="secondary" aria-label={`Download version ${v.version}`} onClick={() => void download.run(v.version)}>
                        Download
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
        </>
      )}
    </Page>
  )
}
