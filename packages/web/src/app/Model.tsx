import type { DeploymentHistoryEntryView, VersionView } from "@podium/adapters-http/models/ModelsApi"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { type DeploymentEntryId, Gate, type ModelId } from "@podium/domain/models"
import { Option, Schema } from "effect"
import type { ModelVersionId } from "@podium/domain/shared"
import { useEffect, useRef, useState } from "preact/hooks"
import type { Caller } from "./Client.ts"
import { FineTunesSection, GateFacts, HeldOutScores, runActive } from "./FineTune.tsx"
import { ModelLogsSections } from "./ModelLogs.tsx"
import {
  baseModelLabel,
  type ModelSettings,
  ModelSettingsFields,
  type ModelSummary,
  plainWords,
  policyOf,
  scheduleLabels,
  settingsOf,
  trainerLabels,
  useModelChoices
} from "./Models.tsx"
import { Alert, Field, formatDate, Loading, Page, Table, useAction, useInterval, useLoad } from "./ui.tsx"

type Version = typeof VersionView.Type
type HistoryEntry = typeof DeploymentHistoryEntryView.Type

/** "version 3": versions are numbered from the oldest, as they were made. */
export const versionNames = (versions: ReadonlyArray<Version>): ReadonlyMap<string, string> =>
  new Map(versions.map((v, i) => [v.id, `version ${versions.length - i}`]))

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

const statusLabels: Record<Version["deployment_status"], string> = {
  none: "not deployed",
  deploying: "deploying…",
  active: "active: serving",
  failed: "deployment failed",
  stopped: "stopped"
}

/** Settings of a deployment as typed, with the API's defaults. */
const deployDefaults = { max_workers: "4", active_workers: "0", default_max_new_tokens: "512", idle_timeout: "300" }

const whole = (text: string, min: number, max: number) => {
  const n = Number(text)
  return text.trim() !== "" && Number.isInteger(n) && n >= min && n <= max ? n : undefined
}

const DeployForm = ({ call, modelId, version, name, onDone, onCancel }: {
  readonly call: Caller
  readonly modelId: ModelId
  readonly version: Version
  readonly name: string
  readonly onDone: () => void
  readonly onCancel: () => void
}) => {
  const [options, setOptions] = useState(deployDefaults)
  const [invalid, setInvalid] = useState<string | undefined>(undefined)
  const first = useRef<HTMLInputElement>(null)
  useEffect(() => first.current?.focus(), [])
  const set = (key: keyof typeof deployDefaults) => (e: { currentTarget: HTMLInputElement }) =>
    setOptions((o) => ({ ...o, [key]: e.currentTarget.value }))
  const deploy = useAction(async () => {
    setInvalid(undefined)
    const max_workers = whole(options.max_workers, 1, 100)
    const active_workers = whole(options.active_workers, 0, 100)
    const default_max_new_tokens = whole(options.default_max_new_tokens, 1, 4096)
    const idle_timeout = whole(options.idle_timeout, 1, 3600)
    if (max_workers === undefined) return setInvalid("Calls at once must be a whole number from 1 to 100.")
    if (active_workers === undefined || active_workers > max_workers) {
      return setInvalid("Workers kept ready must be a whole number from 0 to the calls at once.")
    }
    if (default_max_new_tokens === undefined) return setInvalid("Default max tokens must be a whole number from 1 to 4096.")
    if (idle_timeout === undefined) return setInvalid("Idle timeout must be a whole number of seconds from 1 to 3600.")
    await call((c) =>
      c.deployments.deploy({
        params: { model_id: modelId, version_id: version.id as ModelVersionId },
        payload: { max_workers, active_workers, default_max_new_tokens, idle_timeout }
      })
    )
    onDone()
  })
  return (
    <form class="confirm" aria-label={`Deploy ${name}`} onSubmit={(e) => {
      e.preventDefault()
      void deploy.run()
    }}>
      <div class="row">
        <Field label="Calls at once" hint="Per instance, 1–100; more wait their turn.">
          <input ref={first} type="number" inputMode="numeric" min="1" max="100" value={options.max_workers} onInput={set("max_workers")} />
        </Field>
        <Field label="Workers kept ready" hint="0 up to the calls at once (stored; changes nothing yet).">
          <input type="number" inputMode="numeric" min="0" max="100" value={options.active_workers} onInput={set("active_workers")} />
        </Field>
        <Field label="Default max tokens" hint="For calls that set no max_tokens, 1–4096.">
          <input type="number" inputMode="numeric" min="1" max="4096" value={options.default_max_new_tokens} onInput={set("default_max_new_tokens")} />
        </Field>
        <Field label="Idle timeout (seconds)" hint="1–3600 (stored; changes nothing yet).">
          <input type="number" inputMode="numeric" min="1" max="3600" value={options.idle_timeout} onInput={set("idle_timeout")} />
        </Field>
      </div>
      <Alert message={invalid ?? deploy.error} />
      <div class="row">
        <button type="submit" disabled={deploy.busy}>Deploy {name}</button>
        <button type="button" class="secondary" onClick={onCancel}>Cancel</button>
      </div>
    </form>
  )
}

/** A model's versions, newest first: what each is (never changes), its deployment, deploy and stop. */
const VersionsSection = ({ call, modelId, versions, onChanged }: {
  readonly call: Caller
  readonly modelId: ModelId
  readonly versions: ReadonlyArray<Version>
  readonly onChanged: () => void
}) => {
  const names = versionNames(versions)
  const [deploying, setDeploying] = useState<string | undefined>(undefined)
  const [stopping, setStopping] = useState<string | undefined>(undefined)
  // what was last done here: a stop said as is, a deploy followed until its check ends
  const [done, setDone] = useState<string | { readonly deployed: string; readonly replacing: string | undefined } | undefined>(undefined)
  useInterval(onChanged, 1000, versions.some((v) => v.deployment_status === "deploying"))
  const stop = useAction(async (version: Version) => {
    await call((c) => c.deployments.stop({ params: { model_id: modelId, version_id: version.id as ModelVersionId } }))
    setStopping(undefined)
    setDone(`Stopped ${names.get(version.id)}: the model serves nothing until a version is deployed again.`)
    onChanged()
  })
  const active = versions.find((v) => v.deployment_status === "active")
  const deployedNow = typeof done === "object" ? versions.find((v) => v.id === done.deployed) : undefined
  const doneText = typeof done !== "object" ? done : deployedNow === undefined ? undefined : ({
    deploying: `Deploying ${names.get(deployedNow.id)}: Podium asks it once before it serves${done.replacing === undefined ? "" : `, then ${done.replacing} stops`}.`,
    active: `${capitalised(names.get(deployedNow.id)!)} is deployed and serving.`,
    failed: `${capitalised(names.get(deployedNow.id)!)} could not be deployed: see below.`,
    none: undefined,
    stopped: undefined
  })[deployedNow.deployment_status]
  return (
    <section aria-labelledby="versions-heading">
      <h2 id="versions-heading">Versions</h2>
      <p class="muted">
        Each successful fine-tune makes a version that never changes. Deploy one to serve the model's inference; deploying an
        older one rolls back. Deploying asks the version once before it serves.
      </p>
      {doneText === undefined ? null : <p class="note" role="status">{doneText}</p>}
      <Alert message={stop.error} />
      {versions.length === 0 ? <p class="muted">No versions yet: a successful fine-tune makes the first.</p> : null}
      {versions.map((v) => {
        const name = names.get(v.id)!
        const headingId = `version-${v.id}`
        return (
          <article key={v.id} class="card version" aria-labelledby={headingId}>
            <h3 id={headingId}>
              {capitalised(name)}
              <span class={`badge status-${v.deployment_status}`}>{statusLabels[v.deployment_status]}</span>
            </h3>
            <dl class="facts stack-narrow">
              <dt>Made</dt>
              <dd>{formatDate(v.created_at)} by <a href={`#/models/${modelId}/fine-tunes/${v.fine_tune_run_id}`}>its fine-tune</a></dd>
              <dt>Trainer</dt>
              <dd>{trainerLabels[v.trainer]} on {v.base_model.name}</dd>
              <dt>Held-out score</dt>
              <dd><HeldOutScores metrics={v.metrics} /></dd>
              {v.deployment === null ? null : (
                <>
                  <dt>Deployment</dt>
                  <dd>
                    {v.deployment.max_workers} calls at once, {v.deployment.default_max_new_tokens} tokens by default,{" "}
                    {v.deployment.active_workers} kept ready, idle timeout {v.deployment.idle_timeout} s
                    {v.deployed_at === null ? "" : ` · deployed ${formatDate(v.deployed_at)}`}
                  </dd>
                </>
              )}
              {v.inference_url === null ? null : (
                <>
                  <dt>This version's inference</dt>
                  <dd><code class="wrap">POST {v.inference_url}</code></dd>
                </>
              )}
            </dl>
            <Alert message={v.deployment_status === "failed" && v.deployment_error !== null ? `Deployment failed: ${v.deployment_error}` : undefined} />
            {v.deployment_status === "active"
              ? (
                <>
                  <button type="button" class="danger" aria-expanded={stopping === v.id} onClick={() => setStopping(v.id)}>
                    Stop {name}
                  </button>
                  {stopping === v.id
                    ? (
                      <div class="confirm" role="group" aria-label={`Stop ${name}?`}>
                        <p>The model serves nothing until a version is deployed again: its inference answers 409.</p>
                        <div class="row">
                          <button type="button" class="danger" disabled={stop.busy} onClick={() => void stop.run(v)}>Confirm stop</button>
                          <button type="button" class="secondary" onClick={() => setStopping(undefined)}>Cancel</button>
                        </div>
                      </div>
                    )
                    : null}
                </>
              )
              : v.deployment_status === "deploying" ? null : deploying === v.id
              ? (
                <DeployForm
                  call={call}
                  modelId={modelId}
                  version={v}
                  name={name}
                  onCancel={() => setDeploying(undefined)}
                  onDone={() => {
                    setDeploying(undefined)
                    setDone({ deployed: v.id, replacing: active === undefined ? undefined : names.get(active.id) })
                    onChanged()
                  }}
                />
              )
              : (
                <button type="button" class="secondary" aria-expanded={false} onClick={() => {
                  setDone(undefined)
                  setDeploying(v.id)
                }}>
                  Deploy {name}…
                </button>
              )}
          </article>
        )
      })}
    </section>
  )
}

/** A gate entry's evidence as the gate it records (the history keeps it as plain JSON). */
const gateOf = Schema.decodeUnknownOption(Gate)

const kindLabels: Record<HistoryEntry["kind"], string> = { deploy: "Deployed", rollback: "Rolled back", stop: "Stopped", gate: "Gate" }

const Actor = ({ actor, modelId }: { readonly actor: HistoryEntry["actor"]; readonly modelId: string }) => {
  if (actor.type === "user") return <span title={actor.id}>a user ({actor.id.slice(0, 8)})</span>
  if (actor.type === "api_token") return <span title={actor.id}>API token {actor.id.slice(0, 8)}</span>
  return actor.fine_tune_run_id === undefined
    ? <>Podium</>
    : <a href={`#/models/${modelId}/fine-tunes/${actor.fine_tune_run_id}`}>the gate of a fine-tune</a>
}

const historyPage = 20

/** Every change of what the model serves, newest first, older pages by cursor; a gate's evidence on demand. */
const DeploymentHistorySection = ({ call, modelId, names, revision }: {
  readonly call: Caller
  readonly modelId: ModelId
  readonly names: ReadonlyMap<string, string>
  /** Changes when the versions' deployments do: the history is read again. */
  readonly revision: string
}) => {
  const newest = useLoad(
    () => call((c) => c.models.deploymentHistory({ params: { model_id: modelId }, query: { limit: historyPage } })),
    [modelId, revision]
  )
  const [older, setOlder] = useState<{ readonly entries: ReadonlyArray<HistoryEntry>; readonly next: DeploymentEntryId | null }>()
  useEffect(() => setOlder(undefined), [newest.value])
  const loadOlder = useAction(async (cursor: DeploymentEntryId) => {
    const page = await call((c) => c.models.deploymentHistory({ params: { model_id: modelId }, query: { limit: historyPage, cursor } }))
    setOlder((o) => ({ entries: [...(o?.entries ?? []), ...page.data], next: page.next_cursor }))
  })
  const name = (id: string | null) => id === null ? "nothing" : names.get(id) ?? "a version"
  const entries = [...(newest.value?.data ?? []), ...(older?.entries ?? [])]
  const next = older === undefined ? newest.value?.next_cursor ?? null : older.next
  return (
    <section aria-labelledby="history-heading">
      <h2 id="history-heading">Deployment history</h2>
      <Alert message={newest.error ?? loadOlder.error} />
      {newest.value === undefined ? (newest.error === undefined ? <Loading what="the deployment history" /> : null) : entries.length === 0
        ? <p class="muted">Nothing has been deployed yet.</p>
        : (
          <Table caption="Deployment history">
            <thead>
              <tr><th scope="col">When</th><th scope="col">Change</th><th scope="col">By</th><th scope="col">Reason</th></tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <tr key={e.id}>
                  <td>{formatDate(e.at)}</td>
                  <td>
                    <strong>{kindLabels[e.kind]}</strong>{" "}
                    {e.kind === "stop" ? name(e.from_version_id) : e.to_version_id === null ? `kept ${name(e.from_version_id)}` : (
                      <>
                        {name(e.to_version_id)}
                        {e.from_version_id === null ? null : <span class="band">replacing {name(e.from_version_id)}</span>}
                      </>
                    )}
                  </td>
                  <td><Actor actor={e.actor} modelId={modelId} /></td>
                  <td>
                    <span class="text">{e.reason ?? "—"}</span>
                    {e.kind === "gate"
                      ? Option.match(gateOf(e.evidence), {
                        onNone: () => null,
                        onSome: (gate) => (
                          <details>
                            <summary>Evidence</summary>
                            <GateFacts gate={gate} />
                          </details>
                        )
                      })
                      : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      {next === null ? null : (
        <button type="button" class="secondary" disabled={loadOlder.busy} onClick={() => void loadOlder.run(next)}>Older entries</button>
      )}
    </section>
  )
}

const samePolicy = (model: ModelSummary, s: ModelSettings) => {
  const policy = policyOf(s)
  return typeof policy !== "string" && policy.alpha === model.gate_policy.alpha && policy.margin === model.gate_policy.margin &&
    policy.min_rows === model.gate_policy.min_rows
}

/** The model's settings, changed in one PATCH (only what changed; newly assigned leaderboards are checked). */
const SettingsCard = ({ call, model, choices, onSaved, open, onToggle, saved }: {
  readonly call: Caller
  readonly model: ModelSummary
  readonly choices: ReturnType<typeof useModelChoices>
  /** Saved: the card is made again from the model as saved, so whether it is open and saved is kept by the page. */
  readonly onSaved: (saved: boolean) => void
  readonly saved: boolean
  readonly open: boolean
  readonly onToggle: (open: boolean) => void
}) => {
  const [settings, setSettings] = useState(settingsOf(model))
  const [name, setName] = useState(model.name)
  const [refusal, setRefusal] = useState<string | undefined>(undefined)
  const save = useAction(async () => {
    setRefusal(undefined)
    onSaved(false)
    const policy = policyOf(settings)
    if (typeof policy === "string") return setRefusal(policy)
    const before = settingsOf(model)
    const sameBoards = before.leaderboardIds.join() === settings.leaderboardIds.join()
    try {
      await call((c) =>
        c.models.update({
          params: { model_id: model.id },
          payload: {
            ...(name.trim() === model.name ? {} : { name: name.trim() }),
            ...(sameBoards ? {} : { leaderboard_ids: settings.leaderboardIds as Array<LeaderboardId> }),
            ...(settings.baseModel === before.baseModel ? {} : { selected_base_model_version_id: settings.baseModel === "" ? null : settings.baseModel }),
            ...(settings.schedule === before.schedule ? {} : {
              fine_tune_schedule: settings.schedule === "" ? null : { run: { type: settings.schedule } }
            }),
            ...(settings.continuous === before.continuous ? {} : { continuous_self_learning: settings.continuous }),
            ...(settings.autoUpdate === before.autoUpdate ? {} : { auto_update_model: settings.autoUpdate }),
            ...(settings.hypertuning === before.hypertuning ? {} : { hypertuning_parameters: settings.hypertuning }),
            ...(samePolicy(model, settings) ? {} : { gate_policy: policy })
          }
        })
      )
      onSaved(true)
    } catch (error) {
      setRefusal(plainWords(error, choices.leaderboards.value?.leaderboards ?? []))
    }
  })
  return (
    <details class="card" open={open} onToggle={(e) => onToggle(e.currentTarget.open)}>
      <summary>Settings</summary>
      <form onSubmit={(e) => {
        e.preventDefault()
        void save.run()
      }}>
        <Field label="Model name">
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={200} />
        </Field>
        <ModelSettingsFields
          value={settings}
          onChange={setSettings}
          leaderboards={choices.leaderboards.value?.leaderboards}
          baseModels={choices.bases.value?.base_models}
          fineTuned={model.fine_tuned}
        />
        <Alert message={refusal ?? save.error} />
        {saved ? <p class="note" role="status">Settings saved.</p> : null}
        <button type="submit" disabled={save.busy || name.trim() === ""}>Save settings</button>
      </form>
    </details>
  )
}

/** A model: what it learns from, its fine-tunes, versions and deployments, its inference logs and webhook. */
export const ModelPage = ({ call, modelId, dashboard }: {
  readonly call: Caller
  readonly modelId: string
  /** Whether the app has a dashboard page for models (`#/models/<id>/dashboard`). */
  readonly dashboard?: boolean
}) => {
  const id = modelId as ModelId
  const loaded = useLoad(() => call((c) => c.models.get({ params: { model_id: id } })), [id])
  const choices = useModelChoices(call)
  const runs = useLoad(() => call((c) => c.models.fineTuneRuns({ params: { model_id: id }, query: { limit: 20 } })), [id])
  // a fine-tune that ends may have made a version (and the model fine-tuned)
  const runsState = (runs.value?.runs ?? []).map((r) => `${r.id}:${runActive(r.status) ? "on" : r.status}`).join()
  const versions = useLoad(() => call((c) => c.models.versions({ params: { model_id: id } })), [id, runsState])
  useEffect(() => {
    if (runs.value !== undefined) loaded.reload()
  }, [runsState])
  const deployments = (versions.value?.versions ?? []).map((v) => `${v.id}:${v.deployment_status}`).join()
  const [settingsOpen, setSettingsOpen] = useState(false)
  const [settingsSaved, setSettingsSaved] = useState(false)
  const model = loaded.value?.model
  if (model === undefined) {
    return <Page title="Model"><Alert message={loaded.error} />{loaded.error === undefined ? <Loading what="the model" /> : null}</Page>
  }
  const boards = choices.leaderboards.value?.leaderboards
  const base = choices.bases.value?.base_models.find((b) => b.id === model.selected_base_model_version_id)
  const names = versionNames(versions.value?.versions ?? [])
  const serving = versions.value?.versions.find((v) => v.deployment_status === "active")
  return (
    <Page
      title={model.name}
      actions={
        <span class="row">
          {dashboard === true ? <a class="button secondary" href={`#/models/${id}/dashboard`}>Dashboard</a> : null}
          <a class="button secondary" href="#/models">All models</a>
        </span>
      }
    >
      {model.description === null || model.description === "" ? null : <p>{model.description}</p>}
      <p>
        Serving: <strong>{serving === undefined ? "nothing (no version is active)" : names.get(serving.id)}</strong>
        {serving === undefined ? null : <span class="muted"> · called as <code>POST /v1/models/{id}/inference</code></span>}
      </p>
      <dl class="facts stack-narrow">
        <dt>Base model</dt>
        <dd>{model.selected_base_model_version_id === null ? "not chosen: choose one in Settings to fine-tune" : base === undefined ? "…" : baseModelLabel(base)}</dd>
        <dt>Learns from</dt>
        <dd>
          {model.leaderboard_ids.length === 0 ? "no leaderboard yet" : model.leaderboard_ids.map((l, i) => (
            <span key={l}>
              {i === 0 ? "" : ", "}
              <a href={`#/leaderboards/${l}`}>{boards?.find((b) => b.id === l)?.name ?? "a leaderboard"}</a>
            </span>
          ))}
        </dd>
        <dt>Schedule</dt>
        <dd>
          {model.fine_tune_schedule === null ? "none" : scheduleLabels[model.fine_tune_schedule.run.type]}
          {model.next_fine_tune_at === null ? "" : ` · next ${formatDate(model.next_fine_tune_at)}`}
        </dd>
        <dt>Continuous learning</dt>
        <dd>{model.continuous_self_learning ? "on" : "off"}</dd>
        <dt>Auto update</dt>
        <dd>
          {model.auto_update_model ? "on" : "off"} · gate: alpha {model.gate_policy.alpha}, margin{" "}
          {(model.gate_policy.margin * 100).toFixed(1)} points, {model.gate_policy.min_rows} shared rows
        </dd>
      </dl>
      <SettingsCard
        key={model.updated_at}
        call={call}
        model={model}
        choices={choices}
        open={settingsOpen}
        onToggle={setSettingsOpen}
        saved={settingsSaved}
        onSaved={(saved) => {
          setSettingsSaved(saved)
          if (saved) loaded.reload()
        }}
      />
      <Alert message={runs.error} />
      <FineTunesSection call={call} modelId={id} runs={runs.value?.runs ?? []} onChanged={runs.reload} />
      <Alert message={versions.error} />
      <VersionsSection call={call} modelId={id} versions={versions.value?.versions ?? []} onChanged={versions.reload} />
      <DeploymentHistorySection call={call} modelId={id} names={names} revision={deployments} />
      <ModelLogsSections call={call} modelId={id} names={names} />
    </Page>
  )
}
