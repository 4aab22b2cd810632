import { randomUUID } from "node:crypto"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { aLeaderboard, type SignedIn, signedIn } from "./support/Builders.ts"
import { expectAccessible, launchBrowser, newPage, screenshot, signInThroughForm } from "./support/Browser.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"
import { query } from "./support/sql.ts"

/**
 * Dashboards in the web app, in real Chromium against the whole service: a leaderboard's and a
 * model's calls, errors, spend and latency, reached from their pages, read from the tables under
 * the charts, with a window switch; axe on each.
 */

const owner = "browser-dashboard-owner"
const hour = 3_600_000
const day = 24 * hour
let podium: Podium
let browser: Browser
let api: SignedIn
let leaderboard: string
let model: string
let twoHoursAgo: number

interface Call {
  readonly at: number
  readonly status: string
  readonly latency: number | null
  readonly cost: number | null
}

beforeAll(async () => {
  ;[podium, browser] = await Promise.all([startPodium(), launchBrowser(inject("podiumTestRunDir"))])
  api = await signedIn(podium, owner)
  leaderboard = (await api.api((c) => c.leaderboards.create({ payload: aLeaderboard({ name: "Support answers" }) }))).leaderboard.id
  model = (await api.api((c) => c.models.create({ payload: { name: "Support model" } }))).model.id
  twoHoursAgo = Math.floor(Date.now() / hour) * hour - 2 * hour
  // the hour two hours ago: 3 calls, one failed, $0.0123, latencies 120, 180, 900 ms; and 4 calls 12 days ago
  const calls: ReadonlyArray<Call> = [
    { at: twoHoursAgo + 60_000, status: "success", latency: 120, cost: 0.004 },
    { at: twoHoursAgo + 120_000, status: "error", latency: 180, cost: null },
    { at: twoHoursAgo + 180_000, status: "success", latency: 900, cost: 0.0083 },
    ...Array.from({ length: 4 }, (_, i) => ({ at: Math.floor(Date.now() / day) * day - 12 * day + i * hour, status: "success", latency: 50, cost: 0.001 }))
  ]
  const rows = calls.map((c) => ({ id: randomUUID(), at: new Date(c.at).toISOString(), status: c.status, latency: c.latency, cost: c.cost }))
  await query(podium.databaseUrl, (sql) =>
    sql`INSERT INTO traces (id, workspace_id, leaderboard_id, source, messages, status, latency_ms, cost_usd, created_at)
        SELECT id, ${api.workspace}, ${leaderboard}, 'inference', '[]', status, latency, cost, at
        FROM jsonb_to_recordset(${sql.json(rows)}) AS t(id uuid, at timestamptz, status text, latency double precision, cost double precision)`)
  await query(podium.databaseUrl, (sql) =>
    sql`INSERT INTO model_inference_logs (id, model_id, workspace_id, version_id, "timestamp", input_message, output_messages,
          traces, metadata, created_at)
        SELECT id, ${model}, ${api.workspace}, ${randomUUID()}, at, '{}', '{}', '{}',
          jsonb_build_object('status', status, 'latency_ms', latency, 'cost_usd', cost), at
        FROM jsonb_to_recordset(${sql.json(rows)}) AS t(id uuid, at timestamptz, status text, latency double precision, cost double precision)`)
})
afterAll(async () => {
  await browser?.close()
  await podium?.stop()
})

const signIn = async (): Promise<Page> => signInThroughForm(browser, podium.url, await session(owner))

/** The cells of the row of `table` (a region named after its caption) whose time is the bucket holding `at`. */
const rowCells = async (page: Page, table: string, at: number, bucket: "hour" | "day") => {
  const label = await page.evaluate(([at, bucket]) =>
    (bucket === "hour"
      ? new Intl.DateTimeFormat(undefined, { weekday: "short", hour: "2-digit", minute: "2-digit" })
      : new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", timeZone: "UTC" })).format(at as number), [at, bucket] as const)
  const row = page.getByRole("region", { name: table }).getByRole("row").filter({ has: page.getByRole("rowheader", { name: label, exact: true }) })
  return row.getByRole("cell").allTextContents()
}

/** Opens every "… as a table" toggle of the page. */
const openTables = async (page: Page) => {
  const closed = page.locator("details.chart-numbers:not([open]) > summary")
  while (await closed.count() > 0) await closed.first().click()
}

describe("dashboards in the browser", () => {
  it("a leaderboard's: reached from its page, charts with the numbers in tables, another window, accessible", async () => {
    const page = await signIn()
    await page.goto(`${podium.url}/#/leaderboards/${leaderboard}`)
    await page.getByRole("link", { name: "Dashboard" }).click()
    await page.getByRole("heading", { name: "Support answers: dashboard", level: 1 }).waitFor()
    // the last 24 hours: the three calls of two hours ago
    await expect.poll(() => page.getByRole("status").filter({ hasText: "calls" }).textContent()).toContain("3 calls")
    expect(await page.getByRole("img", { name: /^Calls and errors per hour/ }).count()).toBe(1)
    await openTables(page)
    expect(await rowCells(page, "Calls and errors", twoHoursAgo, "hour")).toEqual(["3", "1"])
    expect(await rowCells(page, "Spend", twoHoursAgo, "hour")).toEqual(["$0.0123"])
    const [p50, p95] = await rowCells(page, "Latency", twoHoursAgo, "hour")
    // exact: 180 and 828 ms (percentile_cont); the dashboard's are within 2%
    expect(Math.abs(Number(p50!.replace(/[^\d.]/g, "")) - 180)).toBeLessThanOrEqual(0.02 * 181)
    expect(Math.abs(Number(p95!.replace(/[^\d.]/g, "")) - 828)).toBeLessThanOrEqual(0.02 * 829)
    await expectAccessible(page, "the leaderboard's dashboard")
    await screenshot(page, "dashboard-leaderboard")

    // 30 days by the day: the calls of 12 days ago too
    await page.getByLabel("Window").selectOption({ label: "Last 30 days, by day" })
    await expect.poll(() => page.getByRole("status").filter({ hasText: "calls" }).textContent()).toContain("7 calls")
    await openTables(page)
    expect(await rowCells(page, "Calls and errors", Math.floor(Date.now() / day) * day - 12 * day, "day")).toEqual(["4", "0"])
    await expectAccessible(page, "the leaderboard's dashboard over 30 days")
    await screenshot(page, "dashboard-leaderboard-30d")
  })

  it("a model's: reached from the model's page, accessible on a phone too", async () => {
    const page = await signIn()
    await page.goto(`${podium.url}/#/models/${model}`)
    await page.getByRole("link", { name: "Dashboard" }).click()
    await page.getByRole("heading", { name: "Support model: dashboard", level: 1 }).waitFor()
    await expect.poll(() => page.getByRole("status").filter({ hasText: "calls" }).textContent()).toContain("3 calls")
    await openTables(page)
    expect(await rowCells(page, "Spend", twoHoursAgo, "hour")).toEqual(["$0.0123"])
    await expectAccessible(page, "the model's dashboard")
    await screenshot(page, "dashboard-model")

    const phone = await newPage(browser, { width: 390, height: 844 })
    await phone.goto(podium.url)
    await phone.getByLabel("Session token").fill(await session(owner))
    await phone.getByRole("button", { name: "Sign in" }).click()
    await phone.getByRole("heading", { name: "Leaderboards", level: 1 }).waitFor()
    await phone.goto(`${podium.url}/#/models/${model}/dashboard`)
    await phone.getByRole("heading", { name: "Support model: dashboard", level: 1 }).waitFor()
    await expect.poll(() => phone.getByRole("status").filter({ hasText: "calls" }).textContent()).toContain("3 calls")
    await expectAccessible(phone, "the model's dashboard at 390 px")
    await screenshot(phone, "dashboard-model-phone")
  })
})
