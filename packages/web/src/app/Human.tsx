import type { CaseId } from "@podium/domain/human"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { useState } from "preact/hooks"
import type { Caller } from "./Client.ts"
import { Alert, Table, Field, formatDate, IntervalChart, Loading, Page, percent, useAction, useLoad, usd } from "./ui.tsx"

/** A version 4 UUID; `crypto.randomUUID` exists only in secure contexts, `getRandomValues` everywhere. */
export const newId = (): string => {
  const b = crypto.getRandomValues(new Uint8Array(16))
  b[6] = (b[6]! & 0x0f) | 0x40
  b[8] = (b[8]! & 0x3f) | 0x80
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("")
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

const reviewLabel = { none: "Not reviewed", draft: "Draft review", confirmed: "Confirmed" } as const

export const HumanPage = ({ call, leaderboardId }: { readonly call: Caller; readonly leaderboardId: string }) => {
  const id = leaderboardId as LeaderboardId
  const summary = useLoad(() => call((c) => c.human.summary({ params: { leaderboard_id: id }, query: {} })), [id])
  const [input, setInput] = useState("")
  const [context, setContext] = useState("")
  const create = useAction(async () => {
    const created = await call((c) =>
      c.human.createCase({
        params: { leaderboard_id: id },
        payload: { id: newId() as CaseId, input, ...(context.trim() === "" ? {} : { context }) }
      })
    )
    location.hash = `#/leaderboards/${id}/human/${created.id}`
  })
  const value = summary.value
  return (
    <Page title="Human evaluation" actions={<a class="button secondary" href={`#/leaderboards/${id}`}>Leaderboard</a>}>
      <Alert message={summary.error} />
      {value === undefined ? (summary.error === undefined ? <Loading what="the summary" /> : null) : (
        <>
          <p class="stats">
            <span>{value.total} cases</span>
            <span>{value.pending} pending review</span>
            <span>{value.ranking.confirmed} confirmed</span>
            {value.next_pending_case === null ? null : (
              <a class="button" href={`#/leaderboards/${id}/human/${value.next_pending_case}`}>Review next pending case</a>
            )}
          </p>
          <h2>Ranking</h2>
          {value.ranking.rows.every((r) => r.total === 0) ? <p class="muted">No confirmed verdicts yet.</p> : (
            <>
              <Table caption="Ranking">
                <thead>
                  <tr><th scope="col">Rank</th><th scope="col">Candidate</th><th scope="col">Score</th><th scope="col">95% interval</th><th scope="col">Correct</th><th scope="col">Average cost</th></tr>
                </thead>
                <tbody>
                  {value.ranking.rows.map((r) => (
                    <tr key={r.leaderboard_model_id}>
                      <td>{r.rank ?? "—"}</td>
                      <td>{r.name}</td>
                      <td>{percent(r.score)}</td>
                      <td>{r.score_low === null ? "—" : `${percent(r.score_low)} – ${percent(r.score_high)}`}</td>
                      <td>{r.correct} of {r.total}</td>
                      <td>{usd(r.average_cost_usd)}</td>
                    </tr>
                  ))}
                </tbody>
              </Table>
              <IntervalChart
                label="Human review scores"
                rows={value.ranking.rows.map((r) => ({ name: r.name, score: r.score, low: r.score_low, high: r.score_high }))}
              />
            </>
          )}
          <h2>Cases</h2>
          {value.cases.length === 0 ? <p class="muted">No cases yet.</p> : (
            <Table caption="Cases">
              <thead>
                <tr><th scope="col">Input</th><th scope="col">Status</th><th scope="col">Review</th><th scope="col">Updated</th></tr>
              </thead>
              <tbody>
                {value.cases.map((c) => (
                  <tr key={c.id}>
                    <td><a href={`#/leaderboards/${id}/human/${c.id}`}>{c.input}</a></td>
                    <td>{c.status}{c.current ? "" : " (earlier configuration)"}</td>
                    <td>{reviewLabel[c.review_state]}</td>
                    <td>{formatDate(c.updated_at)}</td>
                  </tr>
                ))}
              </tbody>
            </Table>
          )}
        </>
      )}
      <form class="card" onSubmit={(e) => {
        e.preventDefault()
        void create.run()
      }}>
        <h2>New case</h2>
        <Field label="Input" hint="What the candidates are asked.">
          <textarea rows={4} value={input} onInput={(e) => setInput(e.currentTarget.value)} required />
        </Field>
        <Field label="Context" hint="Optional background the candidates get with the input.">
          <textarea rows={3} value={context} onInput={(e) => setContext(e.currentTarget.value)} />
        </Field>
        <Alert message={create.error} />
        <button type="submit" disabled={create.busy || input.trim() === ""}>Create case</button>
      </form>
    </Page>
  )
}
