import type { CandidateId, LeaderboardId } from "@podium/domain/leaderboards"
import { useState } from "preact/hooks"
import type { ChallengeView, LeaderboardView } from "@podium/adapters-http/leaderboards/LeaderboardsApi"
import type { Caller } from "./Client.ts"
import { RunsSection } from "./Runs.tsx"
import type { ServingEntry } from "./Serving.tsx"
import { Alert, Field, formatDate, Loading, Page, Table, useAction, useLoad, useWorkspace } from "./ui.tsx"

type EvalType = "exact" | "judge" | "human"
const evalTypes: ReadonlyArray<readonly [EvalType, string]> = [
  ["exact", "Exact match"],
  ["judge", "LLM judge"],
  ["human", "Human review"]
]

interface Judge {
  readonly provider: "router" | "hub"
  readonly model: string
}

const JudgeFields = ({ judge, onChange }: { readonly judge: Judge; readonly onChange: (judge: Judge) => void }) => (
  <div class="row">
    <Field label="Judge provider">
      <select value={judge.provider} onChange={(e) => onChange({ ...judge, provider: e.currentTarget.value as Judge["provider"] })}>
        <option value="router">Router</option>
        <option value="hub">Hub</option>
      </select>
    </Field>
    <Field label="Judge model" hint="The model that decides whether an answer matches the reference.">
      <input value={judge.model} onInput={(e) => onChange({ ...judge, model: e.currentTarget.value })} required />
    </Field>
  </div>
)

/** How answers are scored, and the judge when a model judges them. */
const EvaluationFields = ({ evalType, onEvalType, judge, onJudge }: {
  readonly evalType: EvalType
  readonly onEvalType: (evalType: EvalType) => void
  readonly judge: Judge
  readonly onJudge: (judge: Judge) => void
}) => (
  <>
    <Field label="Evaluation">
      <select value={evalType} onChange={(e) => onEvalType(e.currentTarget.value as EvalType)}>
        {evalTypes.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
      </select>
    </Field>
    {evalType === "judge" ? <JudgeFields judge={judge} onChange={onJudge} /> : null}
  </>
)

export const LeaderboardsPage = ({ call }: { readonly call: Caller }) => {
  const workspace = useWorkspace()
  const list = useLoad(() => call((c) => c.leaderboards.list({ query: { limit: 100, ...workspace } })), [workspace.business_id])
  const [name, setName] = useState("")
  // the API's default too: a leaderboard created without eval_type scores by exact match
  const [evalType, setEvalType] = useState<EvalType>("exact")
  const [systemPrompt, setSystemPrompt] = useState("")
  const [datasetUrl, setDatasetUrl] = useState("")
  const [judge, setJudge] = useState<Judge>({ provider: "router", model: "" })
  const create = useAction(async () => {
    const created = await call((c) =>
      c.leaderboards.create({
        payload: {
          ...workspace,
          name: name.trim(),
          eval_type: evalType,
          ...(datasetUrl.trim() === "" ? { dataset_type: "PUSH" } : { dataset_type: "GET", dataset_url: datasetUrl.trim() }),
          ...(systemPrompt.trim() === "" ? {} : { system_prompt: systemPrompt }),
          ...(evalType === "judge" ? { judge_provider: judge.provider, judge_model: judge.model.trim() } : {})
        }
      })
    )
    location.hash = `#/leaderboards/${created.leaderboard.id}`
  })
  return (
    <Page title="Leaderboards">
      {list.value === undefined ? <Loading what="leaderboards" /> : list.value.leaderboards.length === 0
        ? <p class="muted">No leaderboards yet: create the first one below.</p>
        : (
          <Table caption="Leaderboards">
            <thead>
              <tr><th scope="col">Name</th><th scope="col">Evaluation</th><th scope="col">Status</th><th scope="col">Created</th></tr>
            </thead>
            <tbody>
              {list.value.leaderboards.map((l) => (
                <tr key={l.id}>
                  <td><a href={`#/leaderboards/${l.id}`}>{l.name}</a></td>
                  <td>{evalTypes.find(([t]) => t === l.eval_type)?.[1] ?? l.eval_type}</td>
                  <td>{l.status}</td>
                  <td>{formatDate(l.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      <Alert message={list.error} />
      <form class="card" onSubmit={(e) => {
        e.preventDefault()
        void create.run()
      }}>
        <h2>New leaderboard</h2>
        <Field label="Name">
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={200} />
        </Field>
        <EvaluationFields evalType={evalType} onEvalType={setEvalType} judge={judge} onJudge={setJudge} />
        {evalType === "human" ? null : (
          <Field label="Dataset URL" hint="A JSONL, CSV or JSON file of rows with an input and a reference, or a hub dataset; empty: rows pushed to Podium.">
            <input type="url" value={datasetUrl} onInput={(e) => setDatasetUrl(e.currentTarget.value)} />
          </Field>
        )}
        <Field label="System prompt" hint="What every candidate is told before the input.">
          <textarea rows={3} value={systemPrompt} onInput={(e) => setSystemPrompt(e.currentTarget.value)} />
        </Field>
        <Alert message={create.error} />
        <button type="submit" disabled={create.busy || name.trim() === ""}>Create leaderboard</button>
      </form>
    </Page>
  )
}

type Platform = "Custom" | "Router" | "Hub"

const AddCandidate = ({ call, leaderboardId, onAdded }: {
  readonly call: Caller
  readonly leaderboardId: LeaderboardId
  readonly onAdded: () => void
}) => {
  const [name, setName] = useState("")
  const [platform, setPlatform] = useState<Platform>("Custom")
  const [url, setUrl] = useState("")
  const [modelName, setModelName] = useState("")
  const [token, setToken] = useState("")
  const add = useAction(async () => {
    await call((c) =>
      c.leaderboards.addModel({
        params: { leaderboard_id: leaderboardId },
        payload: {
          name: name.trim(),
          platform,
          ...(platform === "Custom" ? { url: url.trim(), auth_type: token === "" ? "none" as const : "bearer" as const } : {}),
          ...(modelName.trim() === "" ? {} : { model_name: modelName.trim() }),
          ...(token === "" ? {} : { token })
        }
      })
    )
    setName("")
    setUrl("")
    setModelName("")
    setToken("")
    onAdded()
  })
  return (
    <form class="card" onSubmit={(e) => {
      e.preventDefault()
      void add.run()
    }}>
      <h2>Add a candidate</h2>
      <div class="row">
        <Field label="Candidate name">
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={200} />
        </Field>
        <Field label="Platform">
          <select value={platform} onChange={(e) => setPlatform(e.currentTarget.value as Platform)}>
            <option value="Custom">OpenAI-compatible endpoint</option>
            <option value="Router">Router</option>
            <option value="Hub">Hub</option>
          </select>
        </Field>
      </div>
      {platform === "Custom"
        ? (
          <Field label="Endpoint URL" hint="The API root: Podium calls {URL}/chat/completions.">
            <input type="url" value={url} onInput={(e) => setUrl(e.currentTarget.value)} required placeholder="http://127.0.0.1:11434/v1" />
          </Field>
        )
        : null}
      <div class="row">
        <Field label="Model name" hint={platform === "Custom" ? "Optional: sent as `model`." : "The provider's model id."}>
          <input value={modelName} onInput={(e) => setModelName(e.currentTarget.value)} required={platform !== "Custom"} />
        </Field>
        <Field label="API key" hint="Optional; stored encrypted and never shown again.">
          <input type="password" value={token} onInput={(e) => setToken(e.currentTarget.value)} autoComplete="off" />
        </Field>
      </div>
      <Alert message={add.error} />
      <button type="submit" disabled={add.busy || name.trim() === ""}>Add candidate</button>
    </form>
  )
}


/** Prompts, evaluation, judge and schedule: PATCHed together; the schedule's cron empty means none. */
const Settings = ({ call, leaderboard, challenge, onSaved, open, onToggle }: {
  readonly call: Caller
  /** Open or closed as the reader left it, across the reload after a save. */
  readonly open: boolean
  readonly onToggle: (open: boolean) => void
  readonly leaderboard: typeof LeaderboardView.Type
  readonly challenge: typeof ChallengeView.Type
  readonly onSaved: () => void
}) => {
  const schedule = leaderboard.schedule as { readonly cron?: unknown; readonly timezone?: unknown; readonly next_run_at?: unknown }
  const [name, setName] = useState(leaderboard.name)
  const [description, setDescription] = useState(leaderboard.description)
  const [systemPrompt, setSystemPrompt] = useState(challenge.system_prompt ?? "")
  const [modelPrompt, setModelPrompt] = useState(challenge.model_prompt ?? "")
  const [evalType, setEvalType] = useState<EvalType>(challenge.eval_type)
  const [judge, setJudge] = useState<Judge>({
    provider: challenge.judge_provider === "hub" ? "hub" : "router",
    model: challenge.judge_model ?? ""
  })
  const [cron, setCron] = useState(typeof schedule.cron === "string" ? schedule.cron : "")
  const [timezone, setTimezone] = useState(typeof schedule.timezone === "string" ? schedule.timezone : "UTC")
  const [saved, setSaved] = useState(false)
  const save = useAction(async () => {
    setSaved(false)
    await call((c) =>
      c.leaderboards.update({
        params: { leaderboard_id: leaderboard.id },
        payload: {
          name: name.trim(),
          description,
          system_prompt: systemPrompt,
          model_prompt: modelPrompt,
          eval_type: evalType,
          ...(evalType === "judge" ? { judge_provider: judge.provider, judge_model: judge.model.trim() } : {}),
          schedule: cron.trim() === "" ? {} : { cron: cron.trim(), timezone: timezone.trim() }
        }
      })
    )
    setSaved(true)
    onSaved()
  })
  return (
    <details class="card" open={open} onToggle={(e) => onToggle(e.currentTarget.open)}>
      <summary>Settings</summary>
      <form onSubmit={(e) => {
        e.preventDefault()
        void save.run()
      }}>
        <Field label="Leaderboard name">
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={200} />
        </Field>
        <Field label="Description">
          <textarea rows={2} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </Field>
        <Field label="System prompt" hint="What every candidate is told before the input.">
          <textarea rows={3} value={systemPrompt} onInput={(e) => setSystemPrompt(e.currentTarget.value)} />
        </Field>
        <Field label="Model prompt" hint="A template for the user message; {input} and {context} are filled in.">
          <textarea rows={2} value={modelPrompt} onInput={(e) => setModelPrompt(e.currentTarget.value)} />
        </Field>
        <EvaluationFields evalType={evalType} onEvalType={setEvalType} judge={judge} onJudge={setJudge} />
        <div class="row">
          <Field label="Run schedule (cron)" hint="e.g. 0 6 * * 1 for Mondays at 06:00; empty: no scheduled runs.">
            <input value={cron} onInput={(e) => setCron(e.currentTarget.value)} />
          </Field>
          <Field label="Time zone" hint="An IANA name, e.g. Europe/Paris.">
            <input value={timezone} onInput={(e) => setTimezone(e.currentTarget.value)} />
          </Field>
        </div>
        {typeof schedule.next_run_at === "string" ? <p class="muted">Next scheduled run: {formatDate(schedule.next_run_at)}</p> : null}
        <Alert message={save.error} />
        {saved ? <p class="note" role="status">Settings saved.</p> : null}
        <button type="submit" disabled={save.busy || name.trim() === ""}>Save settings</button>
      </form>
    </details>
  )
}

/** Why the ranking serves what it serves, by the newest entry of the serving history. */
const servedBy: Record<ServingEntry["kind"], string> = {
  manual: "the ranking's winner",
  run: "a run's decision",
  human: "the human ranking's decision",
  rollback: "rolled back"
}

export const LeaderboardPage = ({ call, leaderboardId }: { readonly call: Caller; readonly leaderboardId: string }) => {
  const id = leaderboardId as LeaderboardId
  const loaded = useLoad(() => call((c) => c.leaderboards.get({ params: { leaderboard_id: id } })), [id])
  // the newest decision about what serves says what the ranking serves now (a run may have kept, a rollback restored)
  const decided = useLoad(
    () => call((c) => c.leaderboards.servingHistory({ params: { leaderboard_id: id }, query: { limit: 1 } })),
    [id, loaded.value]
  )
  const [settingsOpen, setSettingsOpen] = useState(false)
  const remove = useAction(async (candidate: CandidateId) => {
    await call((c) => c.leaderboards.removeModel({ params: { leaderboard_id: id, leaderboard_model_id: candidate } }))
    loaded.reload()
  })
  const choose = useAction(async (candidate: CandidateId | null) => {
    await call((c) =>
      c.leaderboards.update({
        params: { leaderboard_id: id },
        payload: candidate === null
          ? { chosen_model_strategy: "ranking_winner" }
          : { chosen_model_strategy: "manual", chosen_leaderboard_model_id: candidate }
      })
    )
    loaded.reload()
  })
  const value = loaded.value
  if (value === undefined) return <Page title="Leaderboard"><Alert message={loaded.error} />{loaded.error === undefined ? <Loading what="the leaderboard" /> : null}</Page>
  const { leaderboard, challenge, models } = value
  const manual = leaderboard.chosen_model_strategy === "manual"
  const nameOf = (candidate: string | null | undefined) => models.find((m) => m.id === candidate)?.name
  // what inference serves: the manual choice, else what the newest decision left serving
  const latest = decided.value?.data[0]
  const decidedName = nameOf(latest?.to_candidate_id)
  const servingLine = manual
    ? `serving ${nameOf(leaderboard.chosen_leaderboard_model_id) ?? "the chosen candidate"} (chosen)`
    : latest !== undefined && decidedName !== undefined
    ? `serving ${decidedName} (${servedBy[latest.kind]})`
    : "serving the ranking's winner"
  // the candidate inference answers with now, by the rule of the serving history (or the only candidate)
  const servingId = manual
    ? leaderboard.chosen_leaderboard_model_id
    : [latest?.to_candidate_id, leaderboard.chosen_leaderboard_model_id].find((c) => nameOf(c) !== undefined) ??
      (models.length === 1 ? models[0]!.id : null)
  return (
    <Page
      title={leaderboard.name}
      actions={
        <span class="row">
          {challenge.eval_type === "human" ? <a class="button" href={`#/leaderboards/${id}/human`}>Human evaluation</a> : null}
          {challenge.dataset_type === "PUSH" ? <a class="button secondary" href={`#/leaderboards/${id}/dataset`}>Dataset</a> : null}
          <a class="button secondary" href={`#/leaderboards/${id}/serving`}>Serving history</a>
          <a class="button secondary" href={`#/leaderboards/${id}/traces`}>Traces</a>
          <a class="button secondary" href={`#/leaderboards/${id}/dashboard`}>Dashboard</a>
        </span>
      }
    >
      <p class="muted">
        {evalTypes.find(([t]) => t === challenge.eval_type)?.[1]} · {leaderboard.status} · {servingLine}
      </p>
      {challenge.system_prompt === null || challenge.system_prompt === "" ? null : (
        <details>
          <summary>System prompt</summary>
          <pre class="prompt">{challenge.system_prompt}</pre>
        </details>
      )}
      <h2>Candidates</h2>
      {models.length === 0 ? <p class="muted">No candidates yet.</p> : (
        <Table caption="Candidates">
          <thead>
            <tr><th scope="col">Name</th><th scope="col">Model</th><th scope="col">Serving</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
          </thead>
          <tbody>
            {models.map((m) => {
              const serving = servingId === m.id
              return (
                <tr key={m.id}>
                  <td class="wrap-anywhere">{m.name}</td>
                  {/* the platform under the model, not a column of its own: four columns fit a phone's width */}
                  <td class="wrap-anywhere">{m.model_name ?? m.url ?? "—"}<span class="band">{m.platform}</span></td>
                  <td>
                    {serving
                      ? (
                        <span class="serving-cell">
                          <strong>Serving</strong>
                          {manual
                            ? <button type="button" class="secondary" onClick={() => void choose.run(null)} aria-label={`Use winner instead of ${m.name}`}>Use winner</button>
                            : null}
                        </span>
                      )
                      : <button type="button" class="secondary" onClick={() => void choose.run(m.id)} aria-label={`Serve ${m.name}`}>Serve</button>}
                  </td>
                  <td>
                    <button type="button" class="danger" onClick={() => void remove.run(m.id)} aria-label={`Remove ${m.name}`}>Remove</button>
                  </td>
                </tr>
              )
            })}
          </tbody>
        </Table>
      )}
      <Alert message={remove.error ?? choose.error} />
      <AddCandidate call={call} leaderboardId={id} onAdded={loaded.reload} />
      {challenge.eval_type === "human" ? null : <RunsSection call={call} leaderboardId={id} runs={value.runs} onStarted={loaded.reload} />}
      <Settings
        key={leaderboard.updated_at}
        call={call}
        leaderboard={leaderboard}
        challenge={challenge}
        onSaved={loaded.reload}
        open={settingsOpen}
        onToggle={setSettingsOpen}
      />
    </Page>
  )
}
