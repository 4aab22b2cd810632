import type { ServingHistoryEntryView } from "@podium/adapters-http/leaderboards/LeaderboardsApi"
import type { LeaderboardId, ServingEntryId, ServingPolicy } from "@podium/domain/leaderboards"
import { useEffect, useRef, useState } from "preact/hooks"
import { CallFailed, type Caller } from "./Client.ts"
import { Alert, count, formatDate, Loading, Page, Table, useAction, useLoad } from "./ui.tsx"

export type ServingEntry = typeof ServingHistoryEntryView.Type

export const kindLabels: Record<ServingEntry["kind"], string> = {
  manual: "Manual choice",
  run: "Run decision",
  human: "Human ranking",
  rollback: "Rollback"
}

/** A candidate's name; an id no candidate has any more is a removed candidate, null is nothing served. */
export const candidateName = (names: ReadonlyMap<string, string>, id: string | null) =>
  id === null ? "nothing" : names.get(id) ?? "a removed candidate"

/** `right → partly`, or `kept right` when the entry changed nothing; screen readers hear "to" for the arrow. */
const Change = ({ entry, names }: { readonly entry: ServingEntry; readonly names: ReadonlyMap<string, string> }) =>
  entry.from_candidate_id === entry.to_candidate_id
    ? <>kept {candidateName(names, entry.to_candidate_id)}</>
    : (
      <>
        {candidateName(names, entry.from_candidate_id)} <span aria-hidden="true">→</span>
        <span class="visually-hidden">to</span> {candidateName(names, entry.to_candidate_id)}
      </>
    )

/** The last 8 hex digits: ids are UUID v7, whose first digits are the time and alike for ids made together. */
const shortId = (id: string) => id.slice(-8)

const Actor = ({ actor, leaderboardId }: { readonly actor: ServingEntry["actor"]; readonly leaderboardId: string }) => {
  if (actor.run_id !== undefined) {
    return <a href={`#/leaderboards/${leaderboardId}/runs/${actor.run_id}`}>Run {shortId(actor.run_id)}</a>
  }
  if (actor.type === "user") return <span title={actor.id}>User {shortId(actor.id)}</span>
  if (actor.type === "api_token") return <span title={actor.id}>API token {shortId(actor.id)}</span>
  return <>Podium ({actor.id})</>
}

const switchWhenLabels: Record<ServingPolicy["switch_when"], string> = {
  significantly_better: "the challenger is significantly better",
  non_inferior_and_cheaper: "the challenger is no worse (within the margin) and cheaper"
}

const PolicyFacts = ({ policy }: { readonly policy: ServingPolicy }) => (
  <dl class="facts">
    <dt>Switch when</dt>
    <dd>{switchWhenLabels[policy.switch_when]}</dd>
    <dt>Significance level (α)</dt>
    <dd>{policy.alpha} (Holm-adjusted exact McNemar test)</dd>
    <dt>Shared rows needed</dt>
    <dd>{policy.min_rows}</dd>
    <dt>Non-inferiority margin</dt>
    <dd>{(policy.margin * 100).toFixed(1)} points</dd>
  </dl>
)

const strategyLabels: Record<string, string> = { manual: "chosen by hand", ranking_winner: "the ranking's winner" }

const pValue = (p: number) => p < 0.001 ? p.toExponential(1) : p.toPrecision(3)
const points = (x: number) => `${x > 0 ? "+" : x < 0 ? "−" : ""}${Math.abs(x * 100).toFixed(1)}`
const numberIn = (record: Record<string, unknown> | null | undefined, key: string) =>
  typeof record?.[key] === "number" ? record[key] as number : undefined
const recordIn = (record: Record<string, unknown> | null | undefined, key: string) => {
  const value = record?.[key]
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined
}

/**
 * An entry's evidence in words: a run's or the human ranking's statistics (shared rows, Holm p,
 * the difference with its interval), what a manual change changed, which entry a rollback undid.
 * Evidence is open JSON, so each part is read only when it has the expected shape.
 */
const evidenceWords = (
  entry: ServingEntry,
  names: ReadonlyMap<string, string>,
  entries: ReadonlyArray<ServingEntry>
): ReadonlyArray<string> => {
  const evidence = entry.evidence
  if (evidence === null) return []
  const words: Array<string> = []
  if (entry.kind === "run" || entry.kind === "human") {
    if (evidence["action"] === "first" && entry.from_candidate_id === null && numberIn(evidence, "p_value") === undefined) {
      words.push("nothing served before: no comparison to make")
    }
    const cases = numberIn(evidence, "comparable_cases")
    if (cases !== undefined) words.push(count(cases, "comparable case"))
    const rows = numberIn(evidence, "shared_rows")
    const p = numberIn(evidence, "p_value")
    if (rows !== undefined && (rows > 0 || p !== undefined)) words.push(count(rows, "shared row"))
    if (p !== undefined) words.push(`p = ${pValue(p)} (Holm-adjusted)`)
    const difference = recordIn(evidence, "difference")
    const [estimate, low, high] = ["estimate", "low", "high"].map((k) => numberIn(difference, k))
    if (estimate !== undefined && low !== undefined && high !== undefined) {
      words.push(`difference ${points(estimate)} points (95% interval ${points(low)} to ${points(high)})`)
    }
    if (evidence["chosen_among_ties"] === true) words.push("the cheapest of statistically tied candidates")
  }
  if (entry.kind === "manual") {
    const strategy = recordIn(evidence, "chosen_model_strategy")
    if (strategy !== undefined && strategy["from"] !== strategy["to"]) {
      words.push(`strategy: ${strategyLabels[String(strategy["from"])] ?? String(strategy["from"])} → ${strategyLabels[String(strategy["to"])] ?? String(strategy["to"])}`)
    }
    const chosen = recordIn(evidence, "chosen_leaderboard_model_id")
    if (chosen !== undefined && chosen["from"] !== chosen["to"]) {
      const nameOf = (id: unknown) => typeof id === "string" ? candidateName(names, id) : "none"
      words.push(`chosen candidate: ${nameOf(chosen["from"])} → ${nameOf(chosen["to"])}`)
    }
  }
  if (entry.kind === "rollback") {
    const undone = entries.find((e) => e.id === evidence["undoes"])
    words.push(undone === undefined ? "undoes an earlier change" : `undoes the ${kindLabels[undone.kind].toLowerCase()} of ${formatDate(undone.at)}`)
  }
  return words
}

/** The evidence in words, and the whole of it as JSON on request. */
const Evidence = ({ entry, names, entries }: {
  readonly entry: ServingEntry
  readonly names: ReadonlyMap<string, string>
  readonly entries: ReadonlyArray<ServingEntry>
}) => {
  if (entry.evidence === null) return <>—</>
  const words = evidenceWords(entry, names, entries)
  return (
    <>
      {words.length === 0 ? null : <ul class="evidence">{words.map((w) => <li key={w}>{w}</li>)}</ul>}
      <details class="evidence-json">
        <summary>JSON<span class="visually-hidden"> evidence of the entry of {formatDate(entry.at)}</span></summary>
        <pre>{JSON.stringify(entry.evidence, null, 2)}</pre>
      </details>
    </>
  )
}

const pageSize = 20

/**
 * A leaderboard's serving history, newest first, with older pages by cursor, its serving policy and
 * a rollback to the candidate served before the newest change (asked to confirm first).
 */
export const ServingPage = ({ call, leaderboardId }: { readonly call: Caller; readonly leaderboardId: string }) => {
  const id = leaderboardId as LeaderboardId
  const board = useLoad(() => call((c) => c.leaderboards.get({ params: { leaderboard_id: id } })), [id])
  const newest = useLoad(
    () => call((c) => c.leaderboards.servingHistory({ params: { leaderboard_id: id }, query: { limit: pageSize } })),
    [id]
  )
  // older pages, appended below the newest one; dropped whenever the newest page is loaded again
  const [older, setOlder] = useState<{ readonly entries: ReadonlyArray<ServingEntry>; readonly next: ServingEntryId | null }>()
  const next = older === undefined ? newest.value?.next_cursor ?? null : older.next
  const loadOlder = useAction(async (cursor: ServingEntryId) => {
    const page = await call((c) => c.leaderboards.servingHistory({ params: { leaderboard_id: id }, query: { limit: pageSize, cursor } }))
    setOlder((o) => ({ entries: [...(o?.entries ?? []), ...page.data], next: page.next_cursor }))
  })
  const [confirming, setConfirming] = useState(false)
  const [rolledBack, setRolledBack] = useState<string>()
  const rollbackButton = useRef<HTMLButtonElement>(null)
  const confirmButton = useRef<HTMLButtonElement>(null)
  useEffect(() => {
    if (confirming) confirmButton.current?.focus()
  }, [confirming])
  const names = new Map((board.value?.models ?? []).map((m) => [m.id as string, m.name]))
  const rollback = useAction(async () => {
    setRolledBack(undefined)
    const answer = await call((c) => c.leaderboards.rollback({ params: { leaderboard_id: id } })).catch((error: unknown) => {
      if (!(error instanceof CallFailed) || error.code !== "no_previous_serving") throw error
      // the 409 in plain words, by the newest change the server looked at (when it is among the entries loaded)
      const loaded = [...(newest.value?.data ?? []), ...(older?.entries ?? [])]
      const change = loaded.find((e) => e.from_candidate_id !== e.to_candidate_id)
      if (change === undefined && next !== null) throw error
      throw new Error(
        change === undefined
          ? "There is nothing to roll back to yet: nothing has changed what this leaderboard serves."
          : change.from_candidate_id === null
          ? `There is nothing to roll back to: nothing served before ${candidateName(names, change.to_candidate_id)}, the first candidate to serve.`
          : "There is nothing to roll back to: the candidate that served before the newest change has been removed from this leaderboard."
      )
    })
    setRolledBack(`Rolled back: ${candidateName(names, answer.serving_candidate_id)} serves again.`)
    setOlder(undefined)
    newest.reload()
    board.reload()
  })
  const confirm = async () => {
    await rollback.run()
    setConfirming(false)
    rollbackButton.current?.focus()
  }

  const value = board.value
  if (value === undefined || newest.value === undefined) {
    const error = board.error ?? newest.error
    return <Page title="Serving history"><Alert message={error} />{error === undefined ? <Loading what="the serving history" /> : null}</Page>
  }
  const { leaderboard } = value
  const entries = [...newest.value.data, ...(older?.entries ?? [])]
  const manual = leaderboard.chosen_model_strategy === "manual"
  const serving = manual ? leaderboard.chosen_leaderboard_model_id : entries[0]?.to_candidate_id ?? null
  // the rollback's target, when the newest change is among the entries loaded
  const lastChange = entries.find((e) => e.from_candidate_id !== e.to_candidate_id)
  const question = lastChange?.from_candidate_id == null
    ? "Serve the candidate that served before the newest change again?"
    : `Serve ${candidateName(names, lastChange.from_candidate_id)} again instead of ${candidateName(names, serving)}?`
  return (
    <Page
      title={`Serving history · ${leaderboard.name}`}
      actions={<a class="button secondary" href={`#/leaderboards/${id}`}>Leaderboard</a>}
    >
      <p>
        Serving now: <strong>{serving === null ? "the ranking's winner" : candidateName(names, serving)}</strong>
        <span class="muted">{manual ? " (chosen by hand)" : " (chosen by the ranking)"}</span>
      </p>
      <section class="card" aria-labelledby="rollback-heading">
        <h2 id="rollback-heading">Roll back</h2>
        <p class="muted">Serves the candidate that served before the newest change again; a second rollback undoes the first.</p>
        <button
          type="button"
          class="danger"
          ref={rollbackButton}
          aria-expanded={confirming}
          aria-controls={confirming ? "rollback-confirm" : undefined}
          disabled={rollback.busy}
          onClick={() => {
            setRolledBack(undefined)
            setConfirming(true)
          }}
        >
          Roll back
        </button>
        {confirming
          ? (
            <div id="rollback-confirm" class="confirm" role="group" aria-labelledby="rollback-question">
              <p id="rollback-question">{question}</p>
              <div class="row">
                <button type="button" ref={confirmButton} onClick={() => void confirm()} disabled={rollback.busy}>Confirm rollback</button>
                <button type="button" class="secondary" onClick={() => {
                  setConfirming(false)
                  rollbackButton.current?.focus()
                }}>Cancel</button>
              </div>
            </div>
          )
          : null}
        <Alert message={rollback.error} />
        {rolledBack === undefined ? null : <p class="note" role="status">{rolledBack}</p>}
      </section>
      <h2>History</h2>
      <Alert message={newest.error ?? loadOlder.error} />
      {entries.length === 0 ? <p class="muted">Nothing has decided what this leaderboard serves yet.</p> : (
        <Table caption="Serving history">
          <thead>
            <tr><th scope="col">When</th><th scope="col">Kind</th><th scope="col">Serving</th><th scope="col">By</th><th scope="col">Reason</th><th scope="col">Evidence</th></tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.id}>
                <td>{formatDate(e.at)}</td>
                <td>{kindLabels[e.kind]}</td>
                <td><Change entry={e} names={names} /></td>
                <td><Actor actor={e.actor} leaderboardId={id} /></td>
                <td class="text">{e.reason ?? "—"}</td>
                <td><Evidence entry={e} names={names} entries={entries} /></td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
      {next === null ? null : (
        <button type="button" class="secondary" disabled={loadOlder.busy} onClick={() => void loadOlder.run(next)}>Older entries</button>
      )}
      <section aria-labelledby="policy-heading">
        <h2 id="policy-heading">Serving policy</h2>
        <p class="muted">When a run may replace the candidate the ranking serves.</p>
        <PolicyFacts policy={leaderboard.serving_policy} />
      </section>
    </Page>
  )
}
