import type { LeaderboardId, ServingDecision, ServingPolicy } from "@podium/domain/leaderboards"
import type { CandidateResult } from "@podium/domain/runs"
import type { RunId } from "@podium/domain/shared"
import type { Caller } from "./Client.ts"
import { Alert, count, formatDate, IntervalChart, Loading, Page, percent, Table, useAction, useInterval, useLoad, usd } from "./ui.tsx"

interface RunSummary {
  readonly id: string
  readonly status: "queued" | "running" | "succeeded" | "failed" | "cancelled"
  readonly progress: { readonly total: number; readonly completed: number; readonly failed: number }
  readonly created_at: string
  readonly run_source: string
}

const active = (status: RunSummary["status"]) => status === "queued" || status === "running"

/** Cells answered of all cells, with the failed ones said; a queued run knows no cells yet, and says it waits. */
const Progress = ({ run, label }: { readonly run: RunSummary; readonly label: string }) => (
  <span class="progress">
    {run.status === "queued"
      ? <progress aria-label={label} aria-valuetext="queued" />
      : <progress aria-label={label} max={Math.max(run.progress.total, 1)} value={run.progress.completed} />}
    <span>
      {run.status === "queued" ? "queued" : `${run.progress.completed} of ${run.progress.total}`}
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

const pValue = (p: number) => p < 0.001 ? p.toExponential(1) : p.toPrecision(3)
const points = (x: number) => `${x > 0 ? "+" : x < 0 ? "−" : ""}${Math.abs(x * 100).toFixed(1)}`

/** Whether the run changed what serves, and to what, in one sentence. */
const decisionWords = (decision: ServingDecision, name: (id: string | null) => string) => {
  switch (decision.action) {
    case "first":
      return `The serving model changed: nothing served before, now ${name(decision.to_candidate_id)} serves`
    case "switch":
      return `The serving model changed from ${name(decision.from_candidate_id)} to ${name(decision.to_candidate_id)}`
    case "keep":
      return `The serving model stayed: ${name(decision.to_candidate_id)} serves on`
    case "none":
      return "Nothing serves: no candidate has a score"
  }
}

/**
 * What the run decided about the candidate the ranking serves, why (the decision's reason), and the
 * evidence it rested on measured against the leaderboard's serving policy. Under a manual choice the
 * chosen candidate serves whatever the run decided, and the card says so.
 */
const ServingDecisionCard = ({ decision, names, leaderboardId, policy, manualChoice }: {
  readonly decision: ServingDecision
  readonly names: ReadonlyMap<string, string>
  readonly leaderboardId: string
  readonly policy: ServingPolicy | undefined
  /** The candidate chosen by hand when the leaderboard serves a manual choice, else undefined. */
  readonly manualChoice: string | null | undefined
}) => {
  const name = (id: string | null) => id === null ? "nothing" : names.get(id) ?? "a removed candidate"
  const compared = !(decision.shared_rows === 0 && decision.p_value === null)
  return (
    <section class="card" aria-labelledby="decision-heading">
      <h2 id="decision-heading">Serving decision</h2>
      <dl class="facts">
        <dt>Decision</dt>
        <dd>
          <strong>{decisionWords(decision, name)}</strong>
          {decision.chosen_among_ties ? " (chosen among statistically tied candidates: the cheapest of them)" : ""}
        </dd>
        <dt>Why</dt>
        <dd class="text">{decision.reason}</dd>
        {compared
          ? (
            <>
              <dt>Shared rows</dt>
              <dd>
                {decision.shared_rows}
                {policy === undefined ? "" : decision.shared_rows < policy.min_rows
                  ? ` (fewer than the ${policy.min_rows} the policy needs to switch)`
                  : ` (the policy needs ${policy.min_rows})`}
              </dd>
              <dt>p-value (Holm-adjusted)</dt>
              <dd>
                {decision.p_value === null ? "—" : pValue(decision.p_value)}
                {decision.p_value === null || policy === undefined ? "" : decision.p_value < policy.alpha
                  ? ` (below α ${policy.alpha}: a significant difference)`
                  : ` (not below α ${policy.alpha}: no significant difference)`}
              </dd>
            </>
          )
          : null}
        {decision.difference === null ? null : (
          <>
            <dt>Difference</dt>
            <dd>
              {points(decision.difference.estimate)} points (95% interval {points(decision.difference.low)} to{" "}
              {points(decision.difference.high)})
            </dd>
          </>
        )}
      </dl>
      {manualChoice === undefined ? null : (
        <p class="muted">
          This leaderboard serves {name(manualChoice)}, chosen by hand, whatever a run decides: the decision above is what
          the ranking serves once the leaderboard goes back to the ranking's winner (Use winner).
        </p>
      )}
      <a href={`#/leaderboards/${leaderboardId}/serving`}>Serving history</a>
    </section>
  )
}

/** Each candidate the paired comparison cannot tell from another, with the names of those it is tied with. */
const tiedCandidates = (results: ReadonlyArray<CandidateResult>): ReadonlyMap<string, ReadonlyArray<string>> => {
  const tied = new Map<string, ReadonlyArray<string>>()
  for (const r of results) {
    const others = new Set(r.statistically_tied_with ?? [])
    // the relation is symmetric; read it from both sides in case one side left it out
    for (const o of results) if ((o.statistically_tied_with ?? []).includes(r.leaderboard_model_id)) others.add(o.leaderboard_model_id)
    others.delete(r.leaderboard_model_id)
    const peers = results.filter((o) => others.has(o.leaderboard_model_id)).map((o) => o.name)
    if (peers.length > 0) tied.set(r.leaderboard_model_id, peers)
  }
  return tied
}

/** One run: live progress while it runs, then the ranking with its intervals and every row's answers. */
export const RunPage = ({ call, leaderboardId, runId }: {
  readonly call: Caller
  readonly leaderboardId: string
  readonly runId: string
}) => {
  const params = { leaderboard_id: leaderboardId as LeaderboardId, run_id: runId as RunId }
  const loaded = useLoad(() => call((c) => c.runs.get({ params })), [leaderboardId, runId])
  // the policy the decision is measured against, and whether a manual choice serves regardless
  const board = useLoad(() => call((c) => c.leaderboards.get({ params: { leaderboard_id: params.leaderboard_id } })), [leaderboardId])
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
  const tied = tiedCandidates(run.results)
  const leaderboard = board.value?.leaderboard
  return (
    <Page title={`Run · ${run.status}`} actions={<a class="button secondary" href={`#/leaderboards/${leaderboardId}`}>Leaderboard</a>}>
      <Alert message={loaded.error} />
      <p class="muted">
        Started {formatDate(run.created_at)}
        {run.dataset === null ? "" : ` · ${count(run.dataset.rows, "row")}${run.dataset.version === null ? "" : ` of version ${run.dataset.version}`}`}
        {` · ${run.eval_type === "judge" ? "judged" : "exact match"}`}
      </p>
      <div class="run-progress">
        <Progress run={run} label="Run progress" />
        {running ? <button type="button" class="danger" onClick={() => void cancel.run()} disabled={cancel.busy}>Cancel run</button> : null}
      </div>
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
              {run.results.map((r) => {
                const tiedWith = tied.get(r.leaderboard_model_id)
                const band = r.rank_band
                return (
                  <tr key={r.leaderboard_model_id}>
                    <td>
                      {r.rank}{r.leaderboard_model_id === run.winner_leaderboard_model_id ? " (winner)" : ""}
                      {band === undefined || band.best === band.worst ? null : (
                        <span class="band" title={`Could rank anywhere from ${band.best} to ${band.worst}`}>
                          <span class="visually-hidden">rank band </span>{band.best}–{band.worst}
                        </span>
                      )}
                    </td>
                    <td>
                      {r.name}
                      {tiedWith === undefined ? null : (
                        <span class="badge tied" title={`Statistically tied with ${tiedWith.join(", ")}`}>
                          tied<span class="visually-hidden"> with {tiedWith.join(", ")}</span>
                        </span>
                      )}
                    </td>
                    <td>{percent(r.score)}</td>
                    <td>{r.score_low === null ? "—" : `${percent(r.score_low)} – ${percent(r.score_high)}`}</td>
                    <td>{r.correct} of {r.total}{(r.excluded_rows ?? 0) > 0 ? `, ${count(r.excluded_rows ?? 0, "row")} excluded` : ""}</td>
                    <td>{latency(r.latency_ms_p50)} / {latency(r.latency_ms_p95)}</td>
                    <td>{usd(r.total_cost_usd)}</td>
                    <td>{r.errors}</td>
                  </tr>
                )
              })}
            </tbody>
          </Table>
          {tied.size === 0 && run.results.every((r) => r.rank_band === undefined || r.rank_band.best === r.rank_band.worst) ? null : (
            <p class="muted">
              Tied: no significant difference between the candidates on the rows both answered (Holm-adjusted exact
              McNemar test at the serving policy's α{leaderboard === undefined ? "" : ` ${leaderboard.serving_policy.alpha}`}), so
              their order may be chance. A rank band such as 1–3 spans every rank the candidate could hold given the ties.
            </p>
          )}
          <IntervalChart
            label="Run scores"
            rows={run.results.map((r) => ({ name: r.name, score: r.score, low: r.score_low, high: r.score_high }))}
          />
          {run.serving_decision === null ? null : (
            <ServingDecisionCard
              decision={run.serving_decision}
              names={names}
              leaderboardId={leaderboardId}
              policy={leaderboard?.serving_policy}
              manualChoice={leaderboard?.chosen_model_strategy === "manual" ? leaderboard.chosen_leaderboard_model_id : undefined}
            />
          )}
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
