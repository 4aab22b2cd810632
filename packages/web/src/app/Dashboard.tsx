import type { LeaderboardId } from "@podium/domain/leaderboards"
import type { ModelId } from "@podium/domain/shared"
import { DateTime } from "effect"
import type { ComponentChildren } from "preact"
import { useState } from "preact/hooks"
import type { Caller } from "./Client.ts"
import { Alert, count, Field, Loading, Page, percent, Table, useLoad, usd } from "./ui.tsx"
import type { UsageBucket } from "@podium/adapters-http/inference/StatsApi"

/** Whose dashboard: a leaderboard's (its inference traces) or a model's (its inference logs). */
export type DashboardOf = { readonly kind: "leaderboard"; readonly id: string } | { readonly kind: "model"; readonly id: string }

/** The windows the API offers, each with the bucket size it is read in. */
const choices = [
  { key: "24h", window: "24h", bucket: "hour", label: "Last 24 hours, by hour" },
  { key: "7d-day", window: "7d", bucket: "day", label: "Last 7 days, by day" },
  { key: "7d-hour", window: "7d", bucket: "hour", label: "Last 7 days, by hour" },
  { key: "30d", window: "30d", bucket: "day", label: "Last 30 days, by day" }
] as const
type Choice = typeof choices[number]

type Bucket = typeof UsageBucket.Type

const hourFormat = new Intl.DateTimeFormat(undefined, { weekday: "short", hour: "2-digit", minute: "2-digit" })
// day buckets are UTC days: named in UTC, so a bucket is never labelled with the day before
const dayFormat = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", timeZone: "UTC" })
const when = (bucket: Choice["bucket"], start: DateTime.Utc) =>
  (bucket === "hour" ? hourFormat : dayFormat).format(DateTime.toEpochMillis(start))

const ms = (x: number | null) => x === null ? "—" : x < 10 ? `${x.toFixed(1)} ms` : `${Math.round(x).toLocaleString()} ms`

/** The smallest of 2, 4, 6, 8 or 10 × 10^k at or above `x`, for an axis's top: its half is as round. */
const roundUp = (x: number) => {
  if (x <= 0) return 2
  const power = 10 ** Math.floor(Math.log10(x))
  return ([2, 4, 6, 8].find((m) => m * power >= x) ?? 10) * power
}

interface Series {
  readonly name: string
  readonly className: string
  readonly values: ReadonlyArray<number | null>
}

/**
 * A time chart as inline SVG: bars (`bars`, the second series drawn over the first from the
 * baseline, as errors within calls) or lines with a dot per bucket (gaps where a value is null).
 * The SVG is one image with a summary for screen readers; the numbers are in the table below it.
 */
const TimeChart = ({ title, summary, kind, series, labels, format, children }: {
  readonly title: string
  readonly summary: string
  readonly kind: "bars" | "lines"
  readonly series: ReadonlyArray<Series>
  readonly labels: ReadonlyArray<string>
  readonly format: (x: number) => string
  readonly children: ComponentChildren
}) => {
  const width = 640
  const height = 200
  const left = 64
  const right = 12
  const top = 10
  const bottom = 26
  const plotWidth = width - left - right
  const plotHeight = height - top - bottom
  const n = labels.length
  const axisTop = roundUp(Math.max(0, ...series.flatMap((s) => s.values.map((v) => v ?? 0))))
  const y = (v: number) => top + plotHeight - (v / axisTop) * plotHeight
  const slot = plotWidth / n
  const x = (i: number) => left + slot * (i + 0.5)
  const every = Math.ceil(n / 7)
  return (
    <figure class="chart time-chart">
      <figcaption><strong>{title}</strong>{series.length > 1 ? (
        <span class="legend">{series.map((s) => <span key={s.name}><span class={`key ${s.className}`} aria-hidden="true" /> {s.name}</span>)}</span>
      ) : null}</figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`${title}: ${summary}`}>
        {[0, 0.5, 1].map((t) => (
          <g key={t}>
            <line x1={left} x2={width - right} y1={y(t * axisTop)} y2={y(t * axisTop)} class="grid" />
            <text x={left - 6} y={y(t * axisTop) + 4} text-anchor="end" class="axis">{format(t * axisTop)}</text>
          </g>
        ))}
        {labels.map((label, i) => i % every === 0
          ? <text key={i} x={x(i)} y={height - 8} text-anchor="middle" class="axis">{label}</text>
          : null)}
        {kind === "bars"
          ? series.map((s) => s.values.map((v, i) => v === null || v === 0 ? null : (
            <rect key={`${s.name}${i}`} x={x(i) - slot * 0.4} width={slot * 0.8} y={y(v)} height={y(0) - y(v)} class={s.className} />
          )))
          : series.map((s) => {
            const runs: Array<Array<[number, number]>> = [[]]
            s.values.forEach((v, i) => v === null ? runs.push([]) : runs.at(-1)!.push([x(i), y(v)]))
            return (
              <g key={s.name} class={s.className}>
                {runs.filter((r) => r.length > 1).map((r, j) => <polyline key={j} points={r.map((p) => p.join(",")).join(" ")} />)}
                {runs.flat().map(([cx, cy], j) => <circle key={j} cx={cx} cy={cy} r={n > 48 ? 1.5 : 3} />)}
              </g>
            )
          })}
      </svg>
      {children}
    </figure>
  )
}

/** The same numbers as a chart shows, behind a toggle so the page stays short. */
const Numbers = ({ caption, head, rows }: {
  readonly caption: string
  readonly head: ReadonlyArray<string>
  readonly rows: ReadonlyArray<ReadonlyArray<string>>
}) => (
  <details class="chart-numbers">
    <summary>{caption} as a table</summary>
    <Table caption={caption}>
      <thead><tr>{head.map((h) => <th key={h} scope="col">{h}</th>)}</tr></thead>
      <tbody>{rows.map((r, i) => <tr key={i}>{r.map((cell, j) => j === 0 ? <th key={j} scope="row">{cell}</th> : <td key={j}>{cell}</td>)}</tr>)}</tbody>
    </Table>
  </details>
)

/** Where a chart's peak is, in words: `most 12 at Tue 10:00`. */
const peak = (values: ReadonlyArray<number | null>, labels: ReadonlyArray<string>, format: (x: number) => string) => {
  let best = -1
  values.forEach((v, i) => {
    if (v !== null && (best === -1 || v > values[best]!)) best = i
  })
  return best === -1 || values[best] === 0 ? "none" : `highest ${format(values[best]!)} (${labels[best]})`
}

/**
 * A leaderboard's or a model's calls, errors, spend and latency over a window, each read by one
 * aggregate query of the API (nothing is summed from raw calls here): charts, and under each its
 * numbers as a table.
 */
export const DashboardPage = ({ call, of }: { readonly call: Caller; readonly of: DashboardOf }) => {
  const [key, setKey] = useState<Choice["key"]>("24h")
  const choice = choices.find((c) => c.key === key)!
  const query = { window: choice.window, bucket: choice.bucket }
  const stats = useLoad<{ readonly buckets: ReadonlyArray<Bucket> }>(
    () => of.kind === "leaderboard"
      ? call((c) => c.stats.leaderboard({ params: { leaderboard_id: of.id as LeaderboardId }, query }))
      : call((c) => c.stats.model({ params: { model_id: of.id as ModelId }, query })),
    [of.kind, of.id, key]
  )
  const name = useLoad(
    () => of.kind === "leaderboard"
      ? call((c) => c.leaderboards.get({ params: { leaderboard_id: of.id as LeaderboardId } })).then((l) => l.leaderboard.name)
      : call((c) => c.models.get({ params: { model_id: of.id as ModelId } })).then((m) => m.model.name),
    [of.kind, of.id]
  )
  const back = of.kind === "leaderboard" ? `#/leaderboards/${of.id}` : `#/models/${of.id}`
  const buckets: ReadonlyArray<Bucket> = stats.value?.buckets ?? []
  const labels = buckets.map((b) => when(choice.bucket, b.start))
  const calls = buckets.reduce((n, b) => n + b.calls, 0)
  const errors = buckets.reduce((n, b) => n + b.errors, 0)
  const spend = buckets.reduce((n, b) => n + Number(b.spend_usd), 0)
  const per = choice.bucket === "hour" ? "hour" : "day (UTC)"
  const callsOf = buckets.map((b) => b.calls)
  const spendOf = buckets.map((b) => Number(b.spend_usd))
  const p50 = buckets.map((b) => b.latency_p50_ms)
  const p95 = buckets.map((b) => b.latency_p95_ms)
  const time = choice.bucket === "hour" ? "Hour" : "Day (UTC)"
  return (
    <Page
      title={name.value === undefined ? "Dashboard" : `${name.value}: dashboard`}
      actions={<a class="button secondary" href={back}>{of.kind === "leaderboard" ? "Leaderboard" : "Model"}</a>}
    >
      <div class="row dashboard-controls">
        <Field label="Window">
          <select value={key} onChange={(e) => setKey(e.currentTarget.value as Choice["key"])}>
            {choices.map((c) => <option key={c.key} value={c.key}>{c.label}</option>)}
          </select>
        </Field>
        <button type="button" class="secondary" onClick={stats.reload}>Refresh</button>
      </div>
      <p class="muted">
        {of.kind === "leaderboard"
          ? "Production calls through this leaderboard (and through models that trace on it)."
          : "Calls through this model, whichever version answered."} Latency percentiles are within 2% of the exact value.
      </p>
      <Alert message={stats.error ?? name.error} />
      {stats.value === undefined ? (stats.error === undefined ? <Loading what="the dashboard" /> : null) : (
        <>
          <p class="stats" role="status">
            <span><strong>{count(calls, "call")}</strong></span>
            <span><strong>{count(errors, "error")}</strong> ({calls === 0 ? "—" : percent(errors / calls)})</span>
            <span><strong>{usd(spend)}</strong> spent</span>
          </p>
          <TimeChart
            title={`Calls and errors per ${per}`}
            summary={`${count(calls, "call")}, ${count(errors, "error")}; calls ${peak(callsOf, labels, String)}`}
            kind="bars"
            series={[{ name: "Calls", className: "calls", values: callsOf }, { name: "Errors", className: "errors", values: buckets.map((b) => b.errors) }]}
            labels={labels}
            format={(v) => Math.round(v).toLocaleString()}
          >
            <Numbers caption="Calls and errors" head={[time, "Calls", "Errors"]}
              rows={buckets.map((b, i) => [labels[i]!, b.calls.toLocaleString(), b.errors.toLocaleString()])} />
          </TimeChart>
          <TimeChart
            title={`Spend per ${per}`}
            summary={`${usd(spend)} in all; ${peak(spendOf, labels, usd)}`}
            kind="bars"
            series={[{ name: "Spend", className: "spend", values: spendOf }]}
            labels={labels}
            format={(v) => usd(v)}
          >
            <Numbers caption="Spend" head={[time, "Spend (USD)"]} rows={buckets.map((b, i) => [labels[i]!, `$${b.spend_usd}`])} />
          </TimeChart>
          <TimeChart
            title={`Latency per ${per}, median and 95th percentile`}
            summary={`p50 ${peak(p50, labels, ms)}; p95 ${peak(p95, labels, ms)}`}
            kind="lines"
            series={[{ name: "p50", className: "p50", values: p50 }, { name: "p95", className: "p95", values: p95 }]}
            labels={labels}
            format={(v) => ms(v)}
          >
            <Numbers caption="Latency" head={[time, "p50", "p95"]}
              rows={buckets.map((b, i) => [labels[i]!, ms(b.latency_p50_ms), ms(b.latency_p95_ms)])} />
          </TimeChart>
        </>
      )}
    </Page>
  )
}
