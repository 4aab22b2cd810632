import type { LeaderboardView } from "@podium/adapters-http/leaderboards/LeaderboardsApi"
import type { ModelView } from "@podium/adapters-http/models/ModelsApi"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import type { BaseModel, GatePolicy, ScheduleType } from "@podium/domain/models"
import { useState } from "preact/hooks"
import { type Caller, CallFailed } from "./Client.ts"
import { Alert, Field, formatDate, Loading, Page, Table, useAction, useLoad, useWorkspace } from "./ui.tsx"

export type ModelSummary = typeof ModelView.Type
type Leaderboard = typeof LeaderboardView.Type

export const trainerLabels: Record<BaseModel["trainer"], string> = {
  openai: "fine-tuning API",
  few_shot: "prompt program (few-shot)"
}

export const baseModelLabel = (base: BaseModel) => `${base.name} · ${trainerLabels[base.trainer]}`

export const scheduleLabels: Record<ScheduleType, string> = { DAILY: "Every day", WEEKLY: "Every week", MONTHLY: "Every month" }

/** The gate's defaults as the API documents them (alpha 0.05, margin 0.02, 20 rows). */
const defaultPolicy: GatePolicy = { alpha: 0.05, margin: 0.02, min_rows: 20 }

/** A model's settings as the form holds them: numbers as typed, checked on submit. */
export interface ModelSettings {
  readonly leaderboardIds: ReadonlyArray<string>
  readonly baseModel: string
  readonly schedule: "" | ScheduleType
  readonly continuous: boolean
  readonly autoUpdate: boolean
  readonly hypertuning: boolean
  readonly alpha: string
  readonly margin: string
  readonly minRows: string
}

export const settingsOf = (model: ModelSummary | undefined): ModelSettings => {
  const policy = model?.gate_policy ?? defaultPolicy
  return {
    leaderboardIds: model?.leaderboard_ids ?? [],
    baseModel: model?.selected_base_model_version_id ?? "",
    schedule: model?.fine_tune_schedule?.run.type ?? "",
    continuous: model?.continuous_self_learning ?? false,
    autoUpdate: model?.auto_update_model ?? false,
    hypertuning: model?.hypertuning_parameters ?? false,
    alpha: String(policy.alpha),
    margin: String(policy.margin),
    minRows: String(policy.min_rows)
  }
}

/** The gate policy typed in, or what is wrong with it in words (the API's ranges). */
export const policyOf = (s: ModelSettings): GatePolicy | string => {
  const alpha = Number(s.alpha)
  const margin = Number(s.margin)
  const minRows = Number(s.minRows)
  if (s.alpha.trim() === "" || !(alpha > 0 && alpha < 1)) return "The significance level (alpha) must be between 0 and 1, e.g. 0.05."
  if (s.margin.trim() === "" || !(margin >= 0 && margin < 1)) return "The margin must be at least 0 and below 1, e.g. 0.02 for 2 points."
  if (!Number.isInteger(minRows) || minRows < 1) return "The shared rows needed must be a whole number of at least 1."
  return { alpha, margin, min_rows: minRows }
}

/**
 * An API refusal in plain words: the assignment rules name a leaderboard by its id, said here by its
 * name, with what to do about it.
 */
export const plainWords = (error: unknown, leaderboards: ReadonlyArray<Leaderboard>): string | undefined => {
  if (!(error instanceof CallFailed)) return error instanceof Error ? error.message : undefined
  const named = error.message.replace(
    /Leaderboard ([0-9a-f-]{36})/g,
    (whole, id: string) => {
      const found = leaderboards.find((l) => l.id === id)
      return found === undefined ? whole : `The leaderboard “${found.name}”`
    }
  )
  switch (error.code) {
    case "leaderboard_dataset_min_rows_required":
      return `${named}. Push rows with references to its dataset and consolidate them, or choose another leaderboard.`
    case "leaderboard_running_assignment_blocked":
      return `${named}.`
    case "no_successful_fine_tune":
      return "Continuous learning can be turned on once a fine-tune of this model has succeeded."
    default:
      return named
  }
}

/** The settings a model is created with and changed by: what it learns from, when, and when a new version deploys itself. */
export const ModelSettingsFields = ({ value, onChange, leaderboards, baseModels, fineTuned }: {
  readonly value: ModelSettings
  readonly onChange: (next: ModelSettings) => void
  readonly leaderboards: ReadonlyArray<Leaderboard> | undefined
  readonly baseModels: ReadonlyArray<BaseModel> | undefined
  readonly fineTuned: boolean
}) => {
  const set = (patch: Partial<ModelSettings>) => onChange({ ...value, ...patch })
  const toggleLeaderboard = (id: string) =>
    set({ leaderboardIds: value.leaderboardIds.includes(id) ? value.leaderboardIds.filter((l) => l !== id) : [...value.leaderboardIds, id] })
  const chosenBase = baseModels?.find((b) => b.id === value.baseModel)
  return (
    <>
      <Field label="Base model" hint="What fine-tunes start from. The few-shot trainer needs a router integration (Workspace page).">
        <select value={value.baseModel} onChange={(e) => set({ baseModel: e.currentTarget.value })}>
          <option value="">Choose later</option>
          {(baseModels ?? []).map((b) => <option key={b.id} value={b.id}>{baseModelLabel(b)}</option>)}
          {value.baseModel !== "" && baseModels !== undefined && chosenBase === undefined
            ? <option value={value.baseModel}>A base model no longer offered</option>
            : null}
        </select>
      </Field>
      <fieldset>
        <legend>Leaderboards to learn from</legend>
        <p class="hint">
          Each needs a dataset of at least 100 rows (pushed and consolidated, or a hub dataset) and must not be running.
        </p>
        {leaderboards === undefined ? <Loading what="leaderboards" /> : leaderboards.length === 0
          ? <p class="muted">No leaderboards yet: create one and give it data first.</p>
          : (
            <div class="scopes">
              {leaderboards.map((l) => (
                <label key={l.id} class="choice">
                  <input type="checkbox" checked={value.leaderboardIds.includes(l.id)} onChange={() => toggleLeaderboard(l.id)} />
                  {l.name}
                  {l.status === "running" ? <span class="muted"> (running)</span> : null}
                </label>
              ))}
            </div>
          )}
      </fieldset>
      <fieldset>
        <legend>Learning</legend>
        <Field label="Scheduled fine-tunes" hint="Counted from now, in UTC.">
          <select value={value.schedule} onChange={(e) => set({ schedule: e.currentTarget.value as ModelSettings["schedule"] })}>
            <option value="">None</option>
            {(Object.keys(scheduleLabels) as Array<ScheduleType>).map((t) => <option key={t} value={t}>{scheduleLabels[t]}</option>)}
          </select>
        </Field>
        <label class="choice choice-line">
          <input type="checkbox" checked={value.continuous} disabled={!fineTuned && !value.continuous}
            aria-describedby="continuous-hint" onChange={(e) => set({ continuous: e.currentTarget.checked })} />
          Continuous learning
        </label>
        <p class="hint" id="continuous-hint">
          Fine-tune again whenever an assigned leaderboard has newer consolidated rows.
          {fineTuned ? "" : " Available once a fine-tune of the model has succeeded."}
        </p>
        <label class="choice choice-line">
          <input type="checkbox" checked={value.hypertuning} onChange={(e) => set({ hypertuning: e.currentTarget.checked })} />
          Choose hyperparameters by the data's size
        </label>
      </fieldset>
      <fieldset>
        <legend>Automatic deployment</legend>
        <label class="choice choice-line">
          <input type="checkbox" checked={value.autoUpdate} aria-describedby="auto-update-hint"
            onChange={(e) => set({ autoUpdate: e.currentTarget.checked })} />
          Auto update: deploy a scheduled or continuous fine-tune's version when it passes the gate
        </label>
        <p class="hint" id="auto-update-hint">
          The gate compares the new version with the deployed one on the same held-out rows: it deploys when the new one is no
          worse than the margin (95% interval) and not significantly worse. Manual fine-tunes never deploy themselves.
        </p>
        <div class="row">
          <Field label="Significance level (alpha)" hint="Between 0 and 1; default 0.05.">
            <input type="number" inputMode="decimal" step="any" min="0" max="1" value={value.alpha}
              onInput={(e) => set({ alpha: e.currentTarget.value })} />
          </Field>
          <Field label="Margin" hint="How much worse it may be, as a share: 0.02 is 2 points.">
            <input type="number" inputMode="decimal" step="any" min="0" max="1" value={value.margin}
              onInput={(e) => set({ margin: e.currentTarget.value })} />
          </Field>
          <Field label="Shared rows needed" hint="Held-out rows both versions answered; default 20.">
            <input type="number" inputMode="numeric" step="1" min="1" value={value.minRows}
              onInput={(e) => set({ minRows: e.currentTarget.value })} />
          </Field>
        </div>
      </fieldset>
    </>
  )
}

/** The leaderboards a model may learn from, and the base models it may start from. */
export const useModelChoices = (call: Caller) => {
  const workspace = useWorkspace()
  const leaderboards = useLoad(() => call((c) => c.leaderboards.list({ query: { limit: 1000, ...workspace } })), [workspace.business_id])
  const bases = useLoad(() => call((c) => c.models.baseModels({ query: workspace })), [workspace.business_id])
  return { leaderboards, bases }
}

const samePolicy = (a: GatePolicy, b: GatePolicy) => a.alpha === b.alpha && a.margin === b.margin && a.min_rows === b.min_rows

export const ModelsPage = ({ call }: { readonly call: Caller }) => {
  const workspace = useWorkspace()
  const list = useLoad(() => call((c) => c.models.list({ query: { limit: 1000, ...workspace } })), [workspace.business_id])
  const { leaderboards, bases } = useModelChoices(call)
  const [name, setName] = useState("")
  const [description, setDescription] = useState("")
  const [settings, setSettings] = useState<ModelSettings>(settingsOf(undefined))
  const [refusal, setRefusal] = useState<string | undefined>(undefined)
  const create = useAction(async () => {
    setRefusal(undefined)
    const policy = policyOf(settings)
    if (typeof policy === "string") return setRefusal(policy)
    try {
      const { model } = await call((c) =>
        c.models.create({
          payload: {
            ...workspace,
            name: name.trim(),
            ...(description.trim() === "" ? {} : { description: description.trim() }),
            leaderboard_ids: settings.leaderboardIds as Array<LeaderboardId>,
            selected_base_model_version_id: settings.baseModel === "" ? null : settings.baseModel,
            fine_tune_schedule: settings.schedule === "" ? null : { run: { type: settings.schedule } },
            auto_update_model: settings.autoUpdate,
            hypertuning_parameters: settings.hypertuning
          }
        })
      )
      // the create request takes no gate policy: a policy other than the defaults is set right after
      if (!samePolicy(policy, model.gate_policy)) {
        await call((c) => c.models.update({ params: { model_id: model.id }, payload: { gate_policy: policy } }))
      }
      location.hash = `#/models/${model.id}`
    } catch (error) {
      setRefusal(plainWords(error, leaderboards.value?.leaderboards ?? []))
    }
  })
  const boards = leaderboards.value?.leaderboards
  const baseName = (id: string | null) => id === null ? "not chosen" : bases.value?.base_models.find((b) => b.id === id)?.name ?? "no longer offered"
  const boardNames = (ids: ReadonlyArray<string>) =>
    ids.length === 0 ? "none" : ids.map((id) => boards?.find((l) => l.id === id)?.name ?? "a removed leaderboard").join(", ")
  return (
    <Page title="Models">
      <p class="muted">A model learns from leaderboards' data: fine-tune it, deploy a version, and call it through the API.</p>
      <Alert message={list.error} />
      {list.value === undefined ? (list.error === undefined ? <Loading what="models" /> : null) : list.value.models.length === 0
        ? <p class="muted">No models yet: create the first one below.</p>
        : (
          <Table caption="Models">
            <thead>
              <tr>
                <th scope="col">Name</th><th scope="col">Base model</th><th scope="col">Learns from</th>
                <th scope="col">Fine-tuned</th><th scope="col">Schedule</th><th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {list.value.models.map((m) => (
                <tr key={m.id}>
                  <td><a href={`#/models/${m.id}`}>{m.name}</a></td>
                  <td>{baseName(m.selected_base_model_version_id)}</td>
                  <td>{boardNames(m.leaderboard_ids)}</td>
                  <td>{m.fine_tuned ? "yes" : "not yet"}</td>
                  <td>{m.fine_tune_schedule === null ? "none" : scheduleLabels[m.fine_tune_schedule.run.type]}</td>
                  <td>{formatDate(m.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      <form class="card" onSubmit={(e) => {
        e.preventDefault()
        void create.run()
      }}>
        <h2>New model</h2>
        <Field label="Model name">
          <input value={name} onInput={(e) => setName(e.currentTarget.value)} required maxLength={200} />
        </Field>
        <Field label="Description" hint="Optional.">
          <textarea rows={2} value={description} onInput={(e) => setDescription(e.currentTarget.value)} maxLength={4000} />
        </Field>
        <Alert message={bases.error === undefined ? undefined : `Base models could not be listed: ${bases.error}`} />
        <ModelSettingsFields
          value={settings}
          onChange={setSettings}
          leaderboards={boards}
          baseModels={bases.value?.base_models}
          fineTuned={false}
        />
        <Alert message={refusal ?? create.error ?? leaderboards.error} />
        <button type="submit" disabled={create.busy || name.trim() === ""}>Create model</button>
      </form>
    </Page>
  )
}
