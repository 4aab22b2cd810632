import type { FineTuneRunView } from "@podium/adapters-http/models/ModelsApi"
import type { Gate, ModelId } from "@podium/domain/models"
import type { FineTuneRunId } from "@podium/domain/shared"
import { useState } from "preact/hooks"
import type { Caller } from "./Client.ts"
import { trainerLabels } from "./Models.tsx"
import { Alert, Field, formatDate, Loading, Page, percent, Table, useAction, useInterval, useLoad } from "./ui.tsx"

export type FineTuneRun = typeof FineTuneRunView.Type

export const runActive = (status: FineTuneRun["status"]) => status === "queued" || status === "running"

const triggerLabels: Record<FineTuneRun["trigger"], string> = { manual: "by hand", schedule: "schedule", continuous: "continuous learning" }

/** `metrics.held_out`: the base model and the version on the same held-out rows. */
interface HeldOut {
  readonly rows: number
  readonly correct_before: number
  readonly score_before: number | null
  readonly correct_after: number
  readonly score_after: number | null
}

export const heldOutOf = (metrics: Readonly<Record<string, unknown>> | null): HeldOut | undefined => {
  const held = metrics?.["held_out"] as HeldOut | undefined
  return held !== undefined && typeof held === "object" && typeof held.rows === "number" ? held : undefined
}

/** "40.0% → 95.0%": the base model's held-out score, then the version's. */
export const HeldOutScores = ({ metrics }: { readonly metrics: Readonly<Record<string, unknown>> | null }) => {
  const held = heldOutOf(metrics)
  if (held === undefined) return <>—</>
  if (held.rows === 0) return <>no held-out rows</>
  return (
    <>
      {percent(held.score_before)} <span aria-hidden="true">→</span><span class="visually-hidden">base, then version</span> {percent(held.score_after)}
      <span class="band">on {held.rows} held-out {held.rows === 1 ? "row" : "rows"}</span>
    </>
  )
}

const pValue = (p: number) => p < 0.001 ? p.toExponential(1) : p.toPrecision(3)
const points = (x: number) => `${x > 0 ? "+" : x < 0 ? "−" : ""}${Math.abs(x * 100).toFixed(1)}`

/** The auto-update gate's decision, its reason and the evidence it rested on. */
export const GateFacts = ({ gate }: { readonly gate: Gate }) => (
  <dl class="facts stack-narrow">
    <dt>Decision</dt>
    <dd><strong>{gate.decision === "deploy" ? "Deploy the new version" : "Keep the deployed version"}</strong></dd>
    <dt>Reason</dt>
    <dd class="text">{gate.reason}</dd>
    <dt>Scores</dt>
    <dd>new {percent(gate.candidate_score)}, deployed {gate.deployed_version_id === null ? "none" : percent(gate.deployed_score)}</dd>
    {gate.shared_rows === undefined ? null : (
      <>
        <dt>Shared held-out rows</dt>
        <dd>{gate.shared_rows} (new right where deployed wrong: {gate.wins ?? 0}; the reverse: {gate.losses ?? 0})</dd>
      </>
    )}
    {gate.p_value === undefined || gate.p_value === null ? null : (
      <>
        <dt>p-value (exact McNemar)</dt>
        <dd>{pValue(gate.p_value)}</dd>
      </>
    )}
    {gate.difference === undefined || gate.difference === null ? null : (
      <>
        <dt>Difference</dt>
        <dd>
          {points(gate.difference.estimate)} points (95% interval {points(gate.difference.low)} to {points(gate.difference.high)})
        </dd>
      </>
    )}
    {gate.policy === undefined ? null : (
      <>
        <dt>Policy</dt>
        <dd>alpha {gate.policy.alpha}, margin {(gate.policy.margin * 100).toFixed(1)} points, {gate.policy.min_rows} shared rows needed</dd>
      </>
    )}
  </dl>
)

/** On a model's page: start a fine-tune (with its options), and the model's runs with live status. */
export const FineTunesSection = ({ call, modelId, runs, onChanged }: {
  readonly call: Caller
  readonly modelId: ModelId
  readonly runs: ReadonlyArray<FineTuneRun>
  readonly onChanged: () => void
}) => {
  const [heldOut, setHeldOut] = useState("0.1")
  const [rows, setRows] = useState("")
  const [algorithm, setAlgorithm] = useState<"LAST_N" | "WEIGHTED_SHUFFLE">("LAST_N")
  const [synthetic, setSynthetic] = useState(false)
  const [invalid, setInvalid] = useState<string | undefined>(undefined)
  const start = useAction(async () => {
    setInvalid(undefined)
    const share = Number(heldOut)
    const limit = Number(rows)
    if (heldOut.trim() === "" || !(share >= 0 && share <= 0.5)) return setInvalid("The held-out share must be between 0 and 0.5.")
    if (rows.trim() !== "" && (!Number.isInteger(limit) || limit < 1 || limit > 100_000)) {
      return setInvalid("Rows must be a whole number from 1 to 100,000, or empty for every row.")
    }
    const { run } = await call((c) =>
      c.models.startFineTune({
        params: { model_id: modelId },
        payload: {
          dataset_size: {
            mode: "LIMIT",
            limit: rows.trim() === "" ? { auto: true, algorithm } : { auto: false, rows: limit, algorithm },
            held_out: share
          },
          create_synthetic_data: synthetic
        }
      })
    )
    onChanged()
    location.hash = `#/models/${modelId}/fine-tunes/${run.id}`
  })
  const busy = runs.some((r) => runActive(r.status))
  useInterval(onChanged, 1000, busy)
  return (
    <section aria-labelledby="fine-tunes-heading">
      <h2 id="fine-tunes-heading">Fine-tunes</h2>
      <p class="muted">
        A fine-tune learns from the assigned leaderboards' rows with a reference, keeps a share of them out to measure on,
        and makes a new version. A version made by hand is not deployed until you deploy it.
      </p>
      {runs.length === 0 ? <p class="muted">No fine-tunes yet.</p> : (
        <Table caption="Fine-tunes">
          <thead>
            <tr>
              <th scope="col">Started</th><th scope="col">Status</th><th scope="col">Trigger</th>
              <th scope="col">Held-out score (base → version)</th><th scope="col">Gate</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((r) => (
              <tr key={r.id}>
                <td><a href={`#/models/${modelId}/fine-tunes/${r.id}`}>{formatDate(r.created_at)}</a></td>
                <td>{r.status}{r.error === null ? null : <span class="band">{r.error}</span>}</td>
                <td>{triggerLabels[r.trigger]}</td>
                <td><HeldOutScores metrics={r.metrics} /></td>
                <td>{r.gate === null ? "—" : r.gate.decision === "deploy" ? "deployed" : "kept the deployed version"}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      <form class="card start-fine-tune" onSubmit={(e) => {
        e.preventDefault()
        void start.run()
      }}>
        <h3>Start a fine-tune</h3>
        <div class="row">
          <Field label="Held-out share" hint="Kept out of training to measure the base model and the version on (0 to 0.5).">
            <input type="number" inputMode="decimal" step="any" min="0" max="0.5" value={heldOut} onInput={(e) => setHeldOut(e.currentTarget.value)} />
          </Field>
          <Field label="Rows to learn from" hint="Empty: every row (up to 50,000).">
            <input type="number" inputMode="numeric" step="1" min="1" max="100000" value={rows} onInput={(e) => setRows(e.currentTarget.value)} />
          </Field>
          <Field label="Which rows">
            <select value={algorithm} onChange={(e) => setAlgorithm(e.currentTarget.value as typeof algorithm)}>
              <option value="LAST_N">The newest</option>
              <option value="WEIGHTED_SHUFFLE">A sample weighted toward newer rows</option>
            </select>
          </Field>
        </div>
        <label class="choice choice-line">
          <input type="checkbox" checked={synthetic} onChange={(e) => setSynthetic(e.currentTarget.checked)} />
          Have the leaderboard's judge write references for rows without one
        </label>
        <Alert message={invalid ?? start.error} />
        <div>
          <button type="submit" disabled={start.busy || busy}>Start a fine-tune</button>
          {busy ? <span class="muted"> One fine-tune at a time: this model's is under way.</span> : null}
        </div>
      </form>
    </section>
  )
}

const levelClass = (level: string) => level === "error" ? "alert" : level === "warning" ? "" : "muted"

/** One fine-tune: live status and events while it runs, then what it measured and, for automatic runs, the gate. */
export const FineTunePage = ({ call, modelId, runId }: {
  readonly call: Caller
  readonly modelId: string
  readonly runId: string
}) => {
  const params = { model_id: modelId as ModelId, run_id: runId as FineTuneRunId }
  const loaded = useLoad(() => call((c) => c.models.fineTuneRun({ params })), [modelId, runId])
  const model = useLoad(() => call((c) => c.models.get({ params: { model_id: params.model_id } })), [modelId])
  const run = loaded.value?.run
  const running = run !== undefined && runActive(run.status)
  useInterval(loaded.reload, 1000, running)
  const sync = useAction(async () => {
    await call((c) => c.models.syncFineTune({ params: { model_id: params.model_id }, payload: { run_id: params.run_id } }))
    loaded.reload()
  })
  const back = <a class="button secondary" href={`#/models/${modelId}`}>{model.value?.model.name ?? "Model"}</a>
  if (run === undefined) {
    return <Page title="Fine-tune" actions={back}><Alert message={loaded.error} />{loaded.error === undefined ? <Loading what="the fine-tune" /> : null}</Page>
  }
  const held = heldOutOf(run.metrics)
  const dataset = run.dataset
  return (
    <Page title={`Fine-tune · ${run.status}`} actions={back}>
      <Alert message={loaded.error} />
      <p class="muted" role="status">
        {running ? "Under way: this page follows it. " : ""}
        Started {formatDate(run.created_at)} ({triggerLabels[run.trigger]})
        {run.finished_at === null ? "" : ` · ended ${formatDate(run.finished_at)}`}
      </p>
      {running ? <progress aria-label="Fine-tune under way" /> : null}
      <Alert message={run.error ?? undefined} />
      {run.status === "succeeded" && run.version_id !== null
        ? (
          <p class="note">
            It made a new version. <a href={`#/models/${modelId}`}>Deploy it from the model's page</a>
            {run.gate === null ? "." : run.gate.decision === "deploy" ? " (the gate deployed it)." : " (the gate kept the deployed one)."}
          </p>
        )
        : null}
      <dl class="facts stack-narrow">
        <dt>Trainer</dt>
        <dd>{trainerLabels[run.trainer]}</dd>
        <dt>Base model</dt>
        <dd>{run.base_model.name}</dd>
        {dataset === null ? null : (
          <>
            <dt>Rows</dt>
            <dd>
              {dataset.training_rows} to learn from, {dataset.held_out_rows} held out, of {dataset.available_rows}
              {dataset.synthetic_rows > 0 ? ` (${dataset.synthetic_rows} with references written by the judge)` : ""}
            </dd>
          </>
        )}
        {run.remote === null ? null : (
          <>
            <dt>Fine-tuning job</dt>
            <dd>{run.remote.job_id} · {run.remote.status}</dd>
          </>
        )}
      </dl>
      {run.trainer === "openai" && running
        ? <button type="button" class="secondary" onClick={() => void sync.run()} disabled={sync.busy}>Ask the fine-tuning API now</button>
        : null}
      <Alert message={sync.error} />
      <h2>Held-out rows: base model against the version</h2>
      {held === undefined ? <p class="muted">{running ? "Measured once training ends." : "Not measured."}</p> : held.rows === 0
        ? <p class="muted">No rows were held out, so the version was not measured.</p>
        : (
          <Table caption="Held-out scores">
            <thead><tr><th scope="col">Answered by</th><th scope="col">Correct</th><th scope="col">Score</th></tr></thead>
            <tbody>
              <tr><td>Base model ({run.base_model.name})</td><td>{held.correct_before} of {held.rows}</td><td>{percent(held.score_before)}</td></tr>
              <tr><td>The new version</td><td>{held.correct_after} of {held.rows}</td><td>{percent(held.score_after)}</td></tr>
            </tbody>
          </Table>
        )}
      {run.gate === null ? null : (
        <section class="card" aria-labelledby="gate-heading">
          <h2 id="gate-heading">Auto-update gate</h2>
          <GateFacts gate={run.gate} />
        </section>
      )}
      <h2>Events</h2>
      {run.events.length === 0 ? <p class="muted">No events yet.</p> : (
        <div role="log" aria-label="Fine-tune events">
          <ol class="events">
            {run.events.map((e, i) => (
              <li key={i}>
                <time dateTime={e.at} class="muted">{formatDate(e.at)}</time> <span class={levelClass(e.level)}>{e.message}</span>
              </li>
            ))}
          </ol>
        </div>
      )}
    </Page>
  )
}
