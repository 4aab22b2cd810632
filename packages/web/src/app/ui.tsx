import type { WorkspaceId } from "@podium/domain/shared"
import { DateTime } from "effect"
import { cloneElement, type ComponentChildren, createContext, type VNode } from "preact"
import { useCallback, useContext, useEffect, useId, useRef, useState } from "preact/hooks"
import { CallFailed } from "./Client.ts"

/**
 * The workspace the app acts in: the one chosen in the header's switcher or named by an invite
 * link, else none (the caller's personal workspace, which the server picks when `business_id` is
 * left out).
 */
export const WorkspaceContext = createContext<string | undefined>(undefined)

/** `{ business_id }` for the workspace the app acts in, or nothing for the personal one. */
export const useWorkspace = (): { readonly business_id?: WorkspaceId } => {
  const workspace = useContext(WorkspaceContext)
  return workspace === undefined ? {} : { business_id: workspace as WorkspaceId }
}

/** What a page loads: the value, the failure, and a way to load it again. */
export interface Loaded<A> {
  readonly value: A | undefined
  readonly error: string | undefined
  readonly reload: () => void
}

export const messageOf = (error: unknown): string =>
  error instanceof CallFailed ? error.message : error instanceof Error ? error.message : String(error)

/** Loads `load()` now and whenever `deps` change; a late answer for old deps is dropped. */
export const useLoad = <A,>(load: () => Promise<A>, deps: ReadonlyArray<unknown>): Loaded<A> => {
  const [state, setState] = useState<{ value: A | undefined; error: string | undefined }>({ value: undefined, error: undefined })
  const [round, setRound] = useState(0)
  useEffect(() => {
    let current = true
    load().then(
      (value) => current && setState({ value, error: undefined }),
      (error: unknown) => current && setState((s) => ({ value: s.value, error: messageOf(error) }))
    )
    return () => {
      current = false
    }
  }, [...deps, round])
  const reload = useCallback(() => setRound((n) => n + 1), [])
  return { ...state, reload }
}

/**
 * An action behind a button: `run` calls it, `busy` while it runs, `error` when it failed (shown
 * with `role="alert"` so screen readers announce it).
 */
export const useAction = <Args extends ReadonlyArray<unknown>, A>(action: (...args: Args) => Promise<A>) => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>(undefined)
  const run = async (...args: Args): Promise<A | undefined> => {
    setBusy(true)
    setError(undefined)
    try {
      return await action(...args)
    } catch (e) {
      setError(messageOf(e))
      return undefined
    } finally {
      setBusy(false)
    }
  }
  return { run, busy, error }
}

/** Calls `tick` every `ms` while `active`. */
export const useInterval = (tick: () => void, ms: number, active: boolean) => {
  const saved = useRef(tick)
  saved.current = tick
  useEffect(() => {
    if (!active) return
    const timer = setInterval(() => saved.current(), ms)
    return () => clearInterval(timer)
  }, [ms, active])
}

export const Alert = ({ message }: { readonly message: string | undefined }) =>
  message === undefined ? null : <p class="alert" role="alert">{message}</p>

export const Loading = ({ what }: { readonly what: string }) => <p class="muted" role="status">Loading {what}…</p>

export const Page = ({ title, actions, children }: {
  readonly title: string
  readonly actions?: ComponentChildren
  readonly children: ComponentChildren
}) => {
  useEffect(() => {
    document.title = `${title} · Podium`
  }, [title])
  return (
    <section class="page">
      <header class="page-head">
        <h1>{title}</h1>
        {actions}
      </header>
      {children}
    </section>
  )
}

/**
 * A labelled form field: the label names the control (for screen readers and role-based
 * selectors) and the hint describes it (`aria-describedby`), so the name stays just the label.
 */
export const Field = ({ label, hint, children }: {
  readonly label: string
  readonly hint?: ComponentChildren
  readonly children: VNode<Record<string, unknown>>
}) => {
  const id = useId()
  const hintId = `${id}-hint`
  return (
    <div class="field">
      <label class="field-label" for={id}>{label}</label>
      {cloneElement(children, { id, ...(hint === undefined ? {} : { "aria-describedby": hintId }) })}
      {hint === undefined ? null : <span class="hint" id={hintId}>{hint}</span>}
    </div>
  )
}

/**
 * A table in a region of its own that scrolls sideways on narrow screens; the region can take focus
 * so keyboard users can scroll it too. `caption` names both.
 */
export const Table = ({ caption, children }: { readonly caption: string; readonly children: ComponentChildren }) => (
  <div class="table-wrap" role="region" aria-label={caption} tabIndex={0}>
    <table>
      <caption class="visually-hidden">{caption}</caption>
      {children}
    </table>
  </div>
)

export const formatDate = (time: string | DateTime.Utc) =>
  new Date(typeof time === "string" ? time : DateTime.toEpochMillis(time)).toLocaleString()

export const percent = (x: number | null) => x === null ? "—" : `${(x * 100).toFixed(1)}%`

const cents = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 3 })
const subCent = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", maximumSignificantDigits: 2 })

/** Dollars; below a cent with two significant digits (`$0.00042`), never a row of zeros. */
export const usd = (x: number | null) => x === null ? "—" : x === 0 || Math.abs(x) >= 0.01 ? cents.format(x) : subCent.format(x)

const pluralRules = new Intl.PluralRules("en-US")

/** `1 case`, `2 cases`, `0 cases`: the count with its noun in the form English uses for it. */
export const count = (n: number, one: string, other = `${one}s`) => `${n} ${pluralRules.select(n) === "one" ? one : other}`

/**
 * Scores with their 95% intervals (Wilson), one row per candidate: a line from the interval's low
 * end to its high end and a dot at the score, on a 0–100% axis.
 */
export const IntervalChart = ({ rows, label }: {
  readonly label: string
  readonly rows: ReadonlyArray<{
    readonly name: string
    readonly score: number | null
    readonly low: number | null
    readonly high: number | null
  }>
}) => {
  const rowHeight = 28
  const left = 160
  const width = 520
  const plot = width - left - 16
  const x = (v: number) => left + v * plot
  const height = rows.length * rowHeight + 28
  const described = rows.map((r) =>
    r.score === null ? `${r.name}: no verdicts yet` : `${r.name}: ${percent(r.score)} (${percent(r.low)} to ${percent(r.high)})`
  ).join("; ")
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`${label}: ${described}`}>
        {[0, 0.25, 0.5, 0.75, 1].map((t) => (
          <g key={t}>
            <line x1={x(t)} x2={x(t)} y1={4} y2={height - 20} class="grid" />
            <text x={x(t)} y={height - 6} text-anchor="middle" class="axis">{`${t * 100}%`}</text>
          </g>
        ))}
        {rows.map((r, i) => {
          const y = 4 + i * rowHeight + rowHeight / 2
          return (
            <g key={r.name}>
              <text x={left - 8} y={y + 4} text-anchor="end" class="axis">{r.name.length > 22 ? `${r.name.slice(0, 21)}…` : r.name}</text>
              {r.low === null || r.high === null ? null : <line x1={x(r.low)} x2={x(r.high)} y1={y} y2={y} class="interval" />}
              {r.score === null ? null : <circle cx={x(r.score)} cy={y} r={5} class="score" />}
            </g>
          )
        })}
      </svg>
      <figcaption>{label}: dots are scores, lines their 95% intervals.</figcaption>
    </figure>
  )
}

/** Saves `text` as a file the reader downloads (no server round trip: the app has it already). */
export const saveFile = (name: string, text: string, type: string) => {
  const url = URL.createObjectURL(new Blob([text], { type }))
  const link = document.createElement("a")
  link.href = url
  link.download = name
  link.click()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

export const bytesLabel = (n: number) => n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} kB` : `${(n / 1024 / 1024).toFixed(1)} MB`
