import type { CandidateId, LeaderboardId } from "@podium/domain/leaderboards"
import { useState } from "preact/hooks"
import type { Caller } from "./Client.ts"
import { Alert, Table, Field, formatDate, Loading, Page, useAction, useLoad } from "./ui.tsx"

type EvalType = "exact" | "judge" | "human"
const evalTypes: ReadonlyArray<readonly [EvalType, string]> = [
  ["exact", "Exact match"],
  ["judge", "LLM judge"],
  ["human", "Human review"]
]

export const LeaderboardsPage = ({ call }: { readonly call: Caller }) => {
  const list = useLoad(() => call((c) => c.leaderboards.list({ query: { limit: 100 } })), [])
  const [name, setName] = useState("")
  const [evalType, setEvalType] = useState<EvalType>("human")
  const [systemPrompt, setSystemPrompt] = useState("")
  const create = useAction(async () => {
    const created = await call((c) =>
      c.leaderboards.create({
        payload: {
          name: name.trim(),
          eval_type: evalType,
          dataset_type: "PUSH",
          ...(systemPrompt.trim() === "" ? {} : { system_prompt: systemPrompt })
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
        <Field label="Evaluation">
          <select value={evalType} onChange={(e) => setEvalType(e.currentTarget.value as EvalType)}>
            {evalTypes.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
          </select>
        </Field>
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

export const LeaderboardPage = ({ call, leaderboardId }: { readonly call: Caller; readonly leaderboardId: string }) => {
  const id = leaderboardId as LeaderboardId
  const loaded = useLoad(() => call((c) => c.leaderboards.get({ params: { leaderboard_id: id } })), [id])
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
  return (
    <Page
      title={leaderboard.name}
      actions={challenge.eval_type === "human" ? <a class="button" href={`#/leaderboards/${id}/human`}>Human evaluation</a> : null}
    >
      <p class="muted">
        {evalTypes.find(([t]) => t === challenge.eval_type)?.[1]} · {leaderboard.status} · serving{" "}
        {manual ? "the chosen candidate" : "the ranking's winner"}
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
            <tr><th scope="col">Name</th><th scope="col">Platform</th><th scope="col">Model</th><th scope="col">Serving</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
          </thead>
          <tbody>
            {models.map((m) => {
              const serving = manual && leaderboard.chosen_leaderboard_model_id === m.id
              return (
                <tr key={m.id}>
                  <td>{m.name}</td>
                  <td>{m.platform}</td>
                  <td>{m.model_name ?? m.url ?? "—"}</td>
                  <td>
                    {serving
                      ? (
                        <>
                          <strong>Serving </strong>
                          <button type="button" class="secondary" onClick={() => void choose.run(null)} aria-label={`Use winner instead of ${m.name}`}>Use winner</button>
                        </>
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
    </Page>
  )
}
