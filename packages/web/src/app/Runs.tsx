import type { LeaderboardId } from "@podium/domain/leaderboards"
import type { RunId } from "@podium/domain/shared"
import type { Caller } from "./Client.ts"
import { Alert, formatDate, IntervalChart, Loading, Page, percent, Table, useAction, useInterval, useLoad, usd } from "./ui.tsx"

interface RunSummary {
  readonly id: string
  readonly status: "queued" | "running" | "succeeded" | "failed" | "cancelled"
  readonly progress: { readonly total: number; readonly completed: number; readonly failed: number }
  readonly created_at: string
  readonly run_source: string
}

const active = (status: RunSummary["status"]) => status === "queued" || status === "running"

/** Cells answered of all cells, with the failed ones said. */
const Progress = ({ run, label }: { readonly run: RunSummary; readonly label: string }) => (
  <span class="progress">
    <progress aria-label={label} max={Math.max(run.progress.total, 1)} value={run.progress.completed} />
    <span>
      {run.progress.completed} of {run.progress.total}
      {run.progress.failed > 0 ? `, ${run.progress.failed} failed` : ""}
    </span>
  </span>
)

/** On a leaderboard's page: start a run, and its runs with live progress. */
export const RunsSection = ({ call, leaderboardId, runs, onStarted }: {
  readonly call: Caller
  readonly leaderboardId: LeaderboardId
  readonly runs: ReadonlyArray<RunSummary>
  readonly onStarted: () => void
}) => {
  const start = useAction(async () => {
    const { run } = await call((c) => c.runs.start({ params: { leaderboard_id: leaderboardId }, payload: null }))
    location.hash = `#/leaderboards/${leaderboardId}/runs/${run.id}`
    onStarted()
  })
  // a run in progress moves its bar
  useInterval(onStarted, 1000, runs.some((r) => active(r.status)))
  return (
    <section>
      <h2>Runs</h2>
      <p class="muted">A run asks every candidate every row of the dataset and scores the answers.</p>
      {runs.length === 0 ? <p class="muted">No runs yet.</p> : (
        <Table caption="Runs">
          <thead>
            <tr><th scope="col">Started</th><th scope="col">Status</th><th scope="col">Progress</th><th scope="col">Source</th></tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.id}>
                <td><a href={`#/leaderboards/${leaderboardId}/runs/${r.id}`}>{formatDate(r.created_at)}</a></td>
                <td>{r.status}</td>
                <td><Progress run={r} label={`Progress of the run started ${formatDate(r.created_at)}`} /></td>
                <td>{r.run_source}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <Alert message={start.error} />
      <button type="button" onClick={() => void start.run()} disabled={start.busy || runs.some((r) => active(r.status))}>
        Start a run
      </button>
    </section>
  )
}

const latency = (ms: number | null) => ms === null ? "—" : `${Math.round(ms)} ms`

/** One run: live progress while it runs, then the ranking with its intervals and every row's answers. */
export const RunPage = ({ call, leaderboardId, runId }: {
  readonly call: Caller
  readonly leaderboardId: string
  readonly runId: string
}) => {
  const params = { leaderboard_id: leaderboardId as LeaderboardId, run_id: runId as RunId }
  const loaded = useLoad(() => call((c) => c.runs.get({ params })), [leaderboardId, runId])
  const run = loaded.value?.run
  const running = run !== undefined && active(run.status)
  useInterval(loaded.reload, 1000, running)
  const rows = useLoad(
    () => run === undefined || running ? Promise.resolve(undefined) : call((c) => c.runs.results({ params, query: { limit: 100 } })),
    [leaderboardId, runId, run?.status]
  )
  const cancel = useAction(async () => {
    await call((c) => c.runs.cancel({ params }))
    loaded.reload()
  })
  if (run === undefined) {
    return <Page title="Run"><Alert message={loaded.error} />{loaded.error === undefined ? <Loading what="the run" /> : null}</Page>
  }
  const names = new Map(run.results.map((r) => [r.leaderboard_model_id, r.name]))
  return (
    <Page title={`Run · ${run.status}`} actions={<a class="button secondary" href={`#/leaderboards/${leaderboardId}`}>Leaderboard</a>}>
      <Alert message={loaded.error} />
      <p class="muted">
        Started {formatDate(run.created_at)}
        {run.dataset === null ? "" : ` · ${run.dataset.rows} rows${run.dataset.version === null ? "" : ` of version ${run.dataset.version}`}`}
        {` · ${run.eval_type === "judge" ? "judged" : "exact match"}`}
      </p>
      <Progress run={run} label="Run progress" />
      {running ? <button type="button" class="danger" onClick={() => void cancel.run()} disabled={cancel.busy}>Cancel run</button> : null}
      <Alert message={cancel.error ?? (run.error ?? undefined)} />
      {run.results.length === 0 ? null : (
        <>
          <h2>Results</h2>
          <Table caption="Run results">
            <thead>
              <tr>
                <th scope="col">Rank</th><th scope="col">Candidate</th><th scope="col">Score</th><th scope="col">95% interval</th>
                <th scope="col">Correct</th><th scope="col">Latency p50 / p95</th><th scope="col">Cost</th><th scope="col">Errors</th>
              </tr>
            </thead>
            <tbody>
              {run.results.map((r) => (
                <tr key={r.leaderboard_model_id}>
                  <td>{r.rank}{r.leaderboard_model_id === run.winner_leaderboard_model_id ? " (winner)" : ""}</td>
                  <td>{r.name}</td>
                  <td>{percent(r.score)}</td>
                  <td>{r.score_low === null ? "—" : `${percent(r.score_low)} – ${percent(r.score_high)}`}</td>
                  <td>{r.correct} of {r.total}</td>
                  <td>{latency(r.latency_ms_p50)} / {latency(r.latency_ms_p95)}</td>
                  <td>{usd(r.total_cost_usd)}</td>
                  <td>{r.errors}</td>
                </tr>
              ))}
            </tbody>
          </Table>
          <IntervalChart
            label="Run scores"
            rows={run.results.map((r) => ({ name: r.name, score: r.score, low: r.score_low, high: r.score_high }))}
          />
        </>
      )}
      {rows.value === undefined ? null : (
        <>
          <h2>Rows</h2>
          <Table caption="Answers per row">
            <thead>
              <tr><th scope="col">#</th><th scope="col">Input</th><th scope="col">Reference</th><th scope="col">Answers</th></tr>
            </thead>
            <tbody>
              {rows.value.rows.map((row) => (
                <tr key={row.index}>
                  <td>{row.index + 1}</td>
                  <td class="text">{row.input}</td>
                  <td class="text">{row.reference ?? "—"}</td>
                  <td>
                    <ul class="answers">
                      {row.results.map((cell) => (
                        <li key={cell.leaderboard_model_id}>
                          <strong>{names.get(cell.leaderboard_model_id) ?? cell.leaderboard_model_id}</strong>
                          {cell.verdict === null ? "" : ` · ${cell.verdict}`}
                          {` · ${latency(cell.latency_ms)}`}
                          {cell.cost_usd === null ? "" : ` · ${usd(cell.cost_usd)}`}
                          <div class="text">{cell.error ?? cell.output ?? ""}</div>
                          {cell.reason === null ? null : <div class="muted">{cell.reason}</div>}
                        </li>
                      ))}
                    </ul>
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
          {rows.value.next_offset === null ? null : <p class="muted">The first 100 rows are shown.</p>}
        </>
      )}
    </Page>
  )
}
