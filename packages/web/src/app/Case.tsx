import type { CaseId, ResponseId, Verdict } from "@podium/domain/human"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { useEffect, useRef, useState } from "preact/hooks"
import type { Caller } from "./Client.ts"
import { Alert, Field, Loading, Page, useAction, useInterval, useLoad, usd } from "./ui.tsx"

const verdicts: ReadonlyArray<readonly [Verdict, string, string]> = [
  ["correct", "Correct", "c"],
  ["incorrect", "Incorrect", "i"],
  ["abstain", "Abstain", "a"]
]

/** Typing in a field is not a shortcut. */
const typing = (target: EventTarget | null) =>
  target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName) && !(target instanceof HTMLInputElement && target.type === "radio"))

export const CasePage = ({ call, leaderboardId, caseId }: {
  readonly call: Caller
  readonly leaderboardId: string
  readonly caseId: string
}) => {
  const params = { leaderboard_id: leaderboardId as LeaderboardId, case_id: caseId as CaseId }
  const loaded = useLoad(() => call((c) => c.human.getCase({ params })), [leaderboardId, caseId])
  const theCase = loaded.value
  const [chosen, setChosen] = useState<Record<string, Verdict>>({})
  const [reference, setReference] = useState("")
  const [notes, setNotes] = useState("")
  const [selected, setSelected] = useState(0)
  const [saved, setSaved] = useState<string | undefined>(undefined)

  // the form starts from the saved review each time another revision arrives
  useEffect(() => {
    if (theCase === undefined) return
    setChosen({ ...(theCase.review?.verdicts ?? {}) })
    setReference(theCase.review?.reference ?? "")
    setNotes(theCase.review?.notes ?? "")
  }, [theCase?.id, theCase?.revision])

  const generate = useAction(async () => {
    await call((c) => c.human.generate({ params, payload: {} }))
    loaded.reload()
  })
  // generation answers when complete; meanwhile the case is polled for its progress
  const generating = generate.busy || theCase?.status === "generating"
  useInterval(loaded.reload, 1000, generating)

  const save = useAction(async (confirm: boolean) => {
    if (theCase === undefined) return
    await call((c) =>
      c.human.saveReview({
        params,
        payload: {
          revision: theCase.revision,
          confirm,
          review: { verdicts: chosen as Record<ResponseId, Verdict>, reference, notes }
        }
      })
    )
    setSaved(confirm ? "Review confirmed: the candidates are revealed." : "Draft saved.")
    loaded.reload()
  })
  const next = useAction(async () => {
    const summary = await call((c) => c.human.summary({ params: { leaderboard_id: params.leaderboard_id }, query: {} }))
    location.hash = summary.next_pending_case === null
      ? `#/leaderboards/${leaderboardId}/human`
      : `#/leaderboards/${leaderboardId}/human/${summary.next_pending_case}`
  })

  const responses = theCase?.responses ?? []
  // keys act on what is on screen now, even when two come before the next render
  const current = useRef({ responses, selected })
  current.current = { responses, selected }
  const select = (index: number) => {
    current.current.selected = index
    setSelected(index)
  }
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.altKey || event.ctrlKey || event.metaKey || typing(event.target)) return
      const { responses, selected } = current.current
      const digit = Number(event.key)
      if (Number.isInteger(digit) && digit >= 1 && digit <= responses.length) return select(digit - 1)
      const verdict = verdicts.find(([, , key]) => key === event.key)
      const response = responses[selected]
      if (verdict !== undefined && response !== undefined) {
        setChosen((c) => ({ ...c, [response.id]: verdict[0] }))
        select(Math.min(selected + 1, responses.length - 1))
      } else if (event.key === "n") void next.run()
    }
    addEventListener("keydown", onKey)
    return () => removeEventListener("keydown", onKey)
  }, [])

  if (theCase === undefined) {
    return <Page title="Case"><Alert message={loaded.error} />{loaded.error === undefined ? <Loading what="the case" /> : null}</Page>
  }
  const revealed = theCase.review_state === "confirmed"
  const done = responses.length
  return (
    <Page
      title={revealed ? "Case · revealed" : "Case · blind review"}
      actions={<a class="button secondary" href={`#/leaderboards/${leaderboardId}/human`}>All cases</a>}
    >
      <Alert message={loaded.error} />
      <section class="card">
        <h2>Input</h2>
        <p class="text">{theCase.input}</p>
        {theCase.context === "" ? null : <><h3>Context</h3><p class="text">{theCase.context}</p></>}
        {theCase.attachments.length === 0 ? null : (
          <>
            <h3>Documents</h3>
            <ul>{theCase.attachments.map((a) => <li key={a.id}>{a.name} ({a.scope === "shared" ? "shared" : "this case"})</li>)}</ul>
          </>
        )}
        <details>
          <summary>Prompt</summary>
          <pre class="prompt">{theCase.prompt === "" ? "(empty)" : theCase.prompt}</pre>
        </details>
      </section>

      {theCase.status !== "generated" ? (
        <section class="card">
          <h2>Responses</h2>
          {generating
            ? (
              <>
                <label class="field">
                  <span class="field-label">Generating responses: {done} of {theCase.response_total}</span>
                  <progress max={Math.max(theCase.response_total, 1)} value={done} />
                </label>
              </>
            )
            : <p class="muted">Each candidate answers this case once; you review the answers without knowing who gave them.</p>}
          <Alert message={generate.error} />
          <button type="button" onClick={() => void generate.run()} disabled={generating}>Generate responses</button>
        </section>
      ) : (
        <form onSubmit={(e) => {
          e.preventDefault()
          void save.run(true)
        }}>
          <p class="muted keys">Keys: 1–{responses.length} pick a response, c correct, i incorrect, a abstain, n next pending case.</p>
          {responses.map((r, index) => (
            <article key={r.id} class={`card response${index === selected ? " selected" : ""}`} aria-labelledby={`response-${r.id}`}>
              <h2 id={`response-${r.id}`}>
                Response {r.label}
                {r.model === null ? null : <span class="reveal"> · {r.model.name} ({r.model.model_name ?? r.model.platform})</span>}
              </h2>
              {r.status === "failed"
                ? <p class="alert">The candidate failed to answer{r.error === null ? "" : `: ${r.error}`}.</p>
                : <p class="text">{r.output}</p>}
              {revealed ? <p class="muted">{r.latency_ms === null ? "" : `${Math.round(r.latency_ms)} ms · `}cost {usd(r.cost_usd)}</p> : null}
              <fieldset class="verdicts" onFocusIn={() => select(index)}>
                <legend>Verdict for response {r.label}</legend>
                {verdicts.map(([value, label]) => (
                  <label key={value} class="choice">
                    <input
                      type="radio"
                      name={`verdict-${r.id}`}
                      value={value}
                      checked={chosen[r.id] === value}
                      onChange={() => setChosen((c) => ({ ...c, [r.id]: value }))}
                    />
                    {label}
                  </label>
                ))}
              </fieldset>
            </article>
          ))}
          <section class="card">
            <Field label="Reference answer" hint="What a correct answer says; exported as the case's reference.">
              <textarea rows={3} value={reference} onInput={(e) => setReference(e.currentTarget.value)} />
            </Field>
            <Field label="Notes">
              <textarea rows={2} value={notes} onInput={(e) => setNotes(e.currentTarget.value)} />
            </Field>
            <Alert message={save.error} />
            {saved === undefined ? null : <p class="note" role="status">{saved}</p>}
            <div class="row">
              <button type="button" class="secondary" disabled={save.busy} onClick={() => void save.run(false)}>Save draft</button>
              <button type="submit" disabled={save.busy}>Confirm review</button>
              <button type="button" class="secondary" disabled={next.busy} onClick={() => void next.run()}>Next pending case</button>
            </div>
          </section>
        </form>
      )}
    </Page>
  )
}
