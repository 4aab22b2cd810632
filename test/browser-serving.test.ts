import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { latch, type ModelFake, startModelFake } from "./fakes/ModelFake.ts"
import { expectAccessible, launchBrowser, screenshot, signInThroughForm } from "./support/Browser.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"

/**
 * The web app in real Chromium on what serves a leaderboard: a run that keeps the serving candidate
 * says why, the serving history shows each decision's evidence and rolls back, a member of several
 * workspaces switches between them in the header, and the review's polish (sub-cent costs, plurals,
 * a queued run, the candidates table on a phone).
 */

let models: ModelFake
let podium: Podium
let browser: Browser
let datasets: Server
/** The dataset host answers once this is released: a run waits, queued, for its rows until then. */
let datasetGate = latch()
datasetGate.release()

/** Ten questions q1 … q10 whose references are a1 … a10. */
const questions = Array.from({ length: 10 }, (_, i) => ({ input: `q${i + 1}`, expected: `a${i + 1}` }))
let datasetUrl: string

beforeAll(async () => {
  // a dataset host that can be held: the run is queued while it fetches its rows
  datasets = createServer((_req, res) => {
    void datasetGate.gate.then(() => {
      res.writeHead(200, { "content-type": "application/jsonl" })
      res.end(questions.map((r) => JSON.stringify(r)).join("\n"))
    })
  })
  await new Promise<void>((resolve) => datasets.listen(0, "127.0.0.1", resolve))
  datasetUrl = `http://127.0.0.1:${(datasets.address() as AddressInfo).port}/data.jsonl`
  ;[models, browser] = await Promise.all([startModelFake(), launchBrowser(inject("podiumTestRunDir"))])
  podium = await startPodium()
  models.models["right"] = (q) => q.replace(/^q/, "a")
  models.models["partly"] = (q) => Number(q.slice(1)) <= 6 ? q.replace(/^q/, "a") : "no idea"
  models.models["wrong"] = () => "no idea"
})
afterAll(async () => {
  datasetGate.release()
  await browser?.close()
  await podium?.stop()
  await models?.close()
  datasets?.closeAllConnections()
  await new Promise((resolve) => datasets?.close(resolve))
})

/** A new page signed in as `subject` through the sign-in form. */
const signIn = async (subject: string, viewport?: { width: number; height: number }): Promise<Page> =>
  signInThroughForm(browser, podium.url, await session(subject), viewport)

/**
 * A Custom candidate at the model fake, priced so that each call (the fake reports 1,000 prompt and
 * 500 completion tokens) costs $0.00012 + $0.0003 = $0.00042: below a cent.
 */
const addCandidate = async (token: string, leaderboardId: string, name: string) => {
  const added = await podium.request("POST", `/api/leaderboards/${leaderboardId}/models`, {
    token,
    json: {
      name,
      platform: "Custom",
      model_url: `${models.url}/v1`,
      model_name: name,
      auth_type: "none",
      input_price_per_m_tokens: 0.12,
      output_price_per_m_tokens: 0.6
    }
  })
  expect(added.status).toBe(201)
}

describe("serving in the web app", () => {
  it("says why a run kept the serving candidate, shows the history's evidence, and rolls back from it", async () => {
    const page = await signIn("serve-owner")
    const token = await session("serve-owner")
    // the form's evaluation starts where the API's does: exact match
    expect(await page.getByLabel("Evaluation").inputValue()).toBe("exact")
    await page.getByLabel("Name", { exact: true }).fill("Kept answers")
    await page.getByLabel("Dataset URL").fill(datasetUrl)
    await page.getByRole("button", { name: "Create leaderboard" }).click()
    await page.getByRole("heading", { name: "Kept answers", level: 1 }).waitFor()
    expect(await page.getByText(/^Exact match ·/).count()).toBe(1)
    const leaderboardId = /#\/leaderboards\/([0-9a-f-]{36})/.exec(page.url())![1]!

    // the first run: partly is right on 6 rows where wrong never is (p = 0.031), so partly is the first to serve
    await addCandidate(token, leaderboardId, "partly")
    await addCandidate(token, leaderboardId, "wrong")
    await page.getByRole("link", { name: "Leaderboards", exact: true }).click()
    await page.getByRole("link", { name: "Kept answers" }).click()
    await page.getByRole("button", { name: "Remove partly" }).waitFor()
    await page.getByRole("button", { name: "Start a run" }).click()
    await page.getByRole("heading", { name: "Run · succeeded" }).waitFor({ timeout: 20_000 })
    await page.getByRole("region", { name: "Serving decision" }).getByText("The serving model changed: nothing served before, now partly serves").waitFor()

    // the second run waits for its rows: queued, and said so (not "0 of 0")
    await addCandidate(token, leaderboardId, "right")
    datasetGate = latch()
    await page.getByRole("link", { name: "Leaderboard", exact: true }).click()
    await page.getByRole("button", { name: "Start a run" }).click()
    await page.getByRole("heading", { name: "Run · queued" }).waitFor()
    const progress = page.locator(".progress").first()
    expect(await progress.innerText()).toBe("queued")
    expect(await page.locator("main").innerText()).not.toContain("0 of 0")
    await screenshot(page, "serving-run-queued")
    await expectAccessible(page, "a queued run")
    await page.getByRole("link", { name: "Leaderboard", exact: true }).click()
    const runs = page.getByRole("table", { name: "Runs" })
    await runs.getByRole("row").nth(1).getByText("queued", { exact: true }).first().waitFor()
    expect(await runs.getByRole("row").nth(1).innerText()).toMatch(/queued\s+queued/)
    datasetGate.release()
    await runs.getByRole("row").nth(1).getByText("succeeded").waitFor({ timeout: 20_000 })
    await runs.getByRole("row").nth(1).getByRole("link").click()
    await page.getByRole("heading", { name: "Run · succeeded" }).waitFor()

    // right is better on the run's rows, but 4 discordant rows of 10 are no evidence: partly stays, and the page says why
    const decision = page.getByRole("region", { name: "Serving decision" })
    expect(await decision.innerText()).toMatch(/Decision\s+The serving model stayed: partly serves on\s+Why\s+kept partly: right is not significantly better, p = 0\.13 on 10 shared rows, 30 needed/)
    expect(await decision.innerText()).toMatch(/Shared rows\s+10 \(fewer than the 30 the policy needs to switch\)/)
    expect(await decision.innerText()).toMatch(/p-value \(Holm-adjusted\)\s+0\.125 \(not below α 0\.05: no significant difference\)/)
    expect(await decision.innerText()).toMatch(/Difference\s+\+40\.0 points/)
    // the tied are marked, each with the names of those it is tied with (Holm over 3 pairs: partly and wrong are tied now too)
    const results = page.getByRole("table", { name: "Run results" })
    expect(await results.getByRole("row").nth(1).innerText()).toMatch(/right\s*tied\s+with partly\s/)
    expect(await results.getByRole("row").nth(2).innerText()).toMatch(/partly\s*tied\s+with right, wrong/)
    expect(await results.getByRole("row").nth(3).innerText()).toMatch(/wrong\s*tied\s+with partly\s/)
    // sub-cent costs with their significant digits: 10 calls of $0.00042, and each call
    expect(await results.getByRole("row").nth(1).innerText()).toContain("$0.0042")
    const answers = page.getByRole("table", { name: "Answers per row" })
    await answers.getByText("$0.00042").first().waitFor()
    expect(await page.locator("main").innerText()).not.toContain("$0.00000")
    expect(await page.getByText(/· 10 rows ·/).count()).toBe(1)
    await screenshot(page, "serving-run-kept")
    await expectAccessible(page, "a run that kept the serving candidate")

    // the leaderboard: partly serves (a label, no Serve button for it), right can be chosen by hand
    await page.getByRole("link", { name: "Leaderboard", exact: true }).click()
    await page.getByText("serving partly (a run's decision)").waitFor()
    const candidates = page.getByRole("table", { name: "Candidates" })
    expect(await candidates.getByRole("row", { name: /partly/ }).innerText()).toMatch(/Serving/)
    expect(await page.getByRole("button", { name: "Serve partly" }).count()).toBe(0)

    // the serving history: nothing to roll back to yet (partly was the first to serve), in plain words
    await page.getByRole("link", { name: "Serving history" }).click()
    const history = page.getByRole("table", { name: "Serving history" })
    await history.waitFor()
    expect(await history.getByRole("row").count()).toBe(3)
    expect(await history.getByRole("row").nth(2).innerText()).toMatch(/Run decision\s+nothing\s*→\s*to\s+partly\s+Run [0-9a-f]{8}\s+first to serve: partly/)
    const kept = await history.getByRole("row").nth(1).innerText()
    expect(kept).toMatch(/Run decision\s+kept partly\s+Run [0-9a-f]{8}\s+kept partly: right is not significantly better/)
    expect(kept).toMatch(/10 shared rows\s+p = 0\.125 \(Holm-adjusted\)\s+difference \+40\.0 points \(95% interval/)
    await page.getByRole("button", { name: "Roll back" }).click()
    await page.getByRole("button", { name: "Confirm rollback" }).click()
    await page.getByRole("alert").filter({ hasText: "There is nothing to roll back to: nothing served before partly, the first candidate to serve." }).waitFor()
    await expectAccessible(page, "the serving history with nothing to roll back to")

    // right chosen by hand, then rolled back from the history: partly serves again
    await page.getByRole("link", { name: "Leaderboard", exact: true }).click()
    await page.getByRole("button", { name: "Serve right" }).click()
    await page.getByText("serving right (chosen)").waitFor()
    await page.getByRole("link", { name: "Serving history" }).click()
    await page.getByRole("button", { name: "Roll back" }).click()
    await page.getByText("Serve partly again instead of right?").waitFor()
    await page.getByRole("button", { name: "Confirm rollback" }).click()
    await page.getByRole("status").filter({ hasText: "Rolled back: partly serves again." }).waitFor()
    await expect.poll(() => history.getByRole("row").count()).toBe(5)
    const manual = await history.getByRole("row").nth(2).innerText()
    expect(manual).toMatch(/Manual choice\s+partly\s*→\s*to\s+right\s+User /)
    expect(manual).toMatch(/strategy: the ranking's winner → chosen by hand\s+chosen candidate: none → right/)
    expect(await history.getByRole("row").nth(1).innerText()).toMatch(/Rollback\s+right\s*→\s*to\s+partly\s+User [\s\S]*undoes the manual choice of /)
    await page.getByText("Serving now: partly (chosen by hand)").waitFor()
    await history.getByRole("row").nth(1).getByText("JSON").click()
    expect(await history.getByRole("row").nth(1).locator("pre").innerText()).toContain('"undoes"')
    await screenshot(page, "serving-history-evidence")
    await expectAccessible(page, "the serving history after a rollback")

    // the traces name the candidate of each call
    await page.getByRole("link", { name: "Leaderboard", exact: true }).click()
    await page.getByRole("link", { name: "Traces" }).click()
    await page.getByLabel("Source").selectOption("run")
    const traces = page.getByRole("table", { name: "Traces" })
    await traces.getByRole("columnheader", { name: "Candidate" }).waitFor()
    await traces.getByRole("cell", { name: "right", exact: true }).first().waitFor()
    await traces.getByRole("cell", { name: "partly", exact: true }).first().waitFor()
    await traces.getByRole("cell", { name: "$0.00042" }).first().waitFor()
    await expectAccessible(page, "the traces page with its candidate column")

    // on a phone, the candidates table is all on screen: its last column too, and the page does not scroll sideways
    await page.getByRole("link", { name: "Leaderboard", exact: true }).click()
    await page.setViewportSize({ width: 390, height: 844 })
    await candidates.waitFor()
    await screenshot(page, "serving-leaderboard-phone")
    const remove = await page.getByRole("button", { name: "Remove right" }).boundingBox()
    expect(remove).not.toBeNull()
    expect(remove!.x + remove!.width).toBeLessThanOrEqual(390)
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390)
    const wrap = await candidates.evaluate((table) => {
      const region = table.closest(".table-wrap")!
      return { scroll: region.scrollWidth, client: region.clientWidth }
    })
    expect(wrap.scroll).toBeLessThanOrEqual(wrap.client)
    await expectAccessible(page, "the leaderboard on a phone")
    await page.context().close()
  }, 90_000) // two runs, the history and a rollback, with axe on six pages: the machine is shared

  it("says case counts with plural rules", async () => {
    const page = await signIn("serve-reviewer")
    await page.getByLabel("Name", { exact: true }).fill("Reviewed answers")
    await page.getByLabel("Evaluation").selectOption("human")
    await page.getByRole("button", { name: "Create leaderboard" }).click()
    await page.getByRole("heading", { name: "Reviewed answers", level: 1 }).waitFor()
    const leaderboardId = /#\/leaderboards\/([0-9a-f-]{36})/.exec(page.url())![1]!
    const token = await session("serve-reviewer")
    for (const name of ["right", "partly"]) await addCandidate(token, leaderboardId, name)
    await page.getByRole("link", { name: "Human evaluation" }).click()
    await page.getByText("0 cases", { exact: true }).waitFor()
    // the prompt checkbox sits clear of the button below it
    const checkbox = await page.locator("label.choice.check").boundingBox()
    const create = await page.getByRole("button", { name: "Create case" }).boundingBox()
    expect(create!.y - (checkbox!.y + checkbox!.height)).toBeGreaterThanOrEqual(12)
    await page.getByLabel("Input").fill("q1")
    await page.getByRole("button", { name: "Create case" }).click()
    await page.getByRole("heading", { name: "Case · blind review" }).waitFor()
    await page.getByRole("link", { name: "All cases" }).click()
    await page.getByText("1 case", { exact: true }).waitFor()
    expect(await page.getByText("1 cases").count()).toBe(0)
    await screenshot(page, "serving-human-one-case")
    await expectAccessible(page, "the human evaluation summary with one case")
    await page.context().close()
  })
})

describe("switching workspaces in the web app", () => {
  it("moves a member of three workspaces between them from the header, without an invite link", async () => {
    // Pat is invited to Ada's workspace as an admin and to Bob's as a member; each has a leaderboard there
    for (const [owner, board, role] of [["switch-ada", "Ada's board", "admin"], ["switch-bob", "Bob's board", "member"]] as const) {
      const token = await session(owner)
      expect((await podium.request("POST", "/api/leaderboards", { token, json: { name: board, dataset_type: "PUSH" } })).status).toBe(201)
      expect((await podium.request("POST", "/api/invite-user", { token, json: { email: "switch-pat@example.com", role } })).status).toBe(200)
    }
    const page = await signIn("switch-pat")
    await page.getByText("No leaderboards yet").waitFor()
    const switcher = page.getByRole("banner").getByLabel("Workspace")
    await switcher.waitFor()
    const options = await switcher.locator("option").allInnerTexts()
    expect(options.toSorted()).toEqual([
      "switch-ada@example.com (admin)",
      "switch-bob@example.com (member)",
      "switch-pat@example.com (yours)"
    ])
    expect(await switcher.locator("option:checked").innerText()).toBe("switch-pat@example.com (yours)")
    await screenshot(page, "workspace-switcher")
    await expectAccessible(page, "the header's workspace switcher")

    await switcher.selectOption({ label: "switch-ada@example.com (admin)" })
    await page.getByRole("link", { name: "Ada's board" }).waitFor()
    expect(await page.getByRole("link", { name: "Bob's board" }).count()).toBe(0)
    // an admin there: the workspace page lists Ada's members
    await page.getByRole("link", { name: "Workspace", exact: true }).click()
    await page.getByRole("table", { name: "Members" }).getByText("switch-ada@example.com").waitFor()

    // switching goes back to the leaderboards, of the workspace chosen
    await switcher.selectOption({ label: "switch-bob@example.com (member)" })
    await page.getByRole("heading", { name: "Leaderboards", level: 1 }).waitFor()
    await page.getByRole("link", { name: "Bob's board" }).waitFor()
    expect(await page.getByRole("link", { name: "Ada's board" }).count()).toBe(0)
    // a leaderboard made here is Bob's workspace's
    await page.getByLabel("Name", { exact: true }).fill("Pat's board at Bob's")
    await page.getByRole("button", { name: "Create leaderboard" }).click()
    await page.getByRole("heading", { name: "Pat's board at Bob's", level: 1 }).waitFor()
    const bobs = await podium.request("GET", "/api/leaderboards", { token: await session("switch-bob") })
    expect(bobs.body.leaderboards.map((l: { name: string }) => l.name).toSorted()).toEqual(["Bob's board", "Pat's board at Bob's"])

    await switcher.selectOption({ label: "switch-pat@example.com (yours)" })
    await page.getByText("No leaderboards yet").waitFor()
    await page.setViewportSize({ width: 390, height: 844 })
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390)
    await screenshot(page, "workspace-switcher-phone")
    await expectAccessible(page, "the header's workspace switcher on a phone")
    await page.context().close()
  })
})
