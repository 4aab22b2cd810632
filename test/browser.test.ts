import type { Browser, Page } from "playwright-core"
import type { Readable } from "node:stream"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { type ModelFake, startModelFake } from "./fakes/ModelFake.ts"
import { startOidcFake } from "./fakes/OidcFake.ts"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { expectAccessible, launchBrowser, newPage, screenshot, signInThroughForm } from "./support/Browser.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"

/**
 * The web app in real Chromium against the whole service: what a reviewer and a leaderboard owner
 * do, through the page only (role-based selectors: every control has an accessible name).
 */

let fake: OpenAiFake
let models: ModelFake
let podium: Podium
let browser: Browser

const routerKey = "sk-or-v1-browser-router-key"

/** Ten questions q1 … q10 whose references are a1 … a10. */
const questions = Array.from({ length: 10 }, (_, i) => ({ input: `q${i + 1}`, expected: `a${i + 1}` }))

beforeAll(async () => {
  ;[fake, models, browser] = await Promise.all([startOpenAiFake(), startModelFake({ key: routerKey }), launchBrowser(inject("podiumTestRunDir"))])
  podium = await startPodium({ ROUTER_BASE_URL: `${models.url}/api/v1` })
  models.models["right"] = (q) => q.replace(/^q/, "a")
  models.models["partly"] = (q) => Number(q.slice(1)) <= 6 ? q.replace(/^q/, "a") : "no idea"
  models.files["/data.jsonl"] = { contentType: "application/jsonl", body: questions.map((r) => JSON.stringify(r)).join("\n") }
})
afterAll(async () => {
  await browser?.close()
  await podium?.stop()
  await Promise.all([fake?.close(), models?.close()])
})

const streamText = async (stream: Readable) => {
  const chunks: Array<Buffer> = []
  for await (const chunk of stream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}

/** A new page signed in as `subject` through the sign-in form. */
const signIn = async (subject: string, viewport?: { width: number; height: number }): Promise<Page> =>
  signInThroughForm(browser, podium.url, await session(subject), viewport)

describe("the web app", () => {
  it("serves one page at / that loads its script and stylesheet, under 300 kB of JavaScript gzipped", async () => {
    const page = await newPage(browser)
    const scripts: Array<number> = []
    page.on("response", (response) => {
      if (response.url().endsWith(".js")) void response.body().then((b) => scripts.push(b.length))
    })
    const answer = await page.goto(`${podium.url}/?invite_id=00000000-0000-4000-8000-000000000000`)
    expect(answer?.status()).toBe(200)
    expect(answer?.headers()["content-security-policy"]).toContain("script-src 'self'")
    await expect.poll(() => page.getByRole("heading", { name: "Sign in to Podium" }).count()).toBe(1)
    await expect.poll(() => page.getByText("You were invited to a workspace").count()).toBe(1)
    await screenshot(page, "sign-in")
    await expectAccessible(page, "the sign-in page")

    // only GET: anything else is the contract's 405, an unknown asset its 404
    const posted = await podium.request("POST", "/", { json: {} })
    expect(posted.status).toBe(405)
    expect(posted.headers.get("allow")).toBe("GET")
    expect(posted.body.error.code).toBe("method_not_allowed")
    const missing = await podium.request("GET", "/assets/app-000000000000.js")
    expect(missing.status).toBe(404)
    expect(missing.body.error.code).toBe("not_found")

    const gzipped = await podium.request("GET", "/", { headers: { "accept-encoding": "identity" } })
    const script = /src="(\/assets\/app-[0-9a-f]+\.js)"/.exec(gzipped.text)?.[1]
    expect(script).toBeDefined()
    const asset = await fetch(`${podium.url}${script}`)
    expect(asset.headers.get("cache-control")).toContain("immutable")
    const bytes = new Uint8Array(await asset.arrayBuffer())
    const { gzipSync } = await import("node:zlib")
    expect(gzipSync(bytes).length).toBeLessThan(300_000)
    await page.context().close()
  })

  it("refuses a session token the server does not accept, and says so in plain words", async () => {
    const page = await newPage(browser)
    await page.goto(podium.url)
    // the hint names the command as a new checkout runs it, set as code
    const hint = page.locator(".field .hint")
    expect(await hint.locator("code").textContent()).toBe("npm run --silent podium -- dev-session --email you@example.com")
    expect(await hint.textContent()).not.toContain("`")
    for (const mistyped of ["not-a-session", "eyJhbGciOiJIUzI1NiJ9.e30"]) {
      await page.getByLabel("Session token").fill(mistyped)
      await page.getByRole("button", { name: "Sign in" }).click()
      await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/^That is not a session token/)
      expect(await page.getByRole("alert").textContent()).not.toMatch(/JWS|JWT/)
      await page.getByLabel("Session token").fill("")
    }
    expect(await page.getByRole("heading", { name: "Leaderboards" }).count()).toBe(0)
    await page.context().close()
  })

  it("takes an owner from a new leaderboard through blind review to the reveal and the ranking", async () => {
    const page = await signIn("browser-owner")
    await screenshot(page, "leaderboards")
    await expectAccessible(page, "the leaderboards page")

    await page.getByLabel("Name", { exact: true }).fill("Support answers")
    await page.getByLabel("Evaluation").selectOption("human")
    await page.getByLabel("System prompt").fill("Answer in one sentence.")
    await page.getByRole("button", { name: "Create leaderboard" }).click()
    await page.getByRole("heading", { name: "Support answers", level: 1 }).waitFor()

    for (const name of ["secret-alpha", "secret-beta"]) {
      await page.getByLabel("Candidate name").fill(name)
      await page.getByLabel("Endpoint URL").fill(`${fake.url}/${name}`)
      await page.getByRole("button", { name: "Add candidate" }).click()
      await page.getByRole("cell", { name, exact: true }).waitFor()
    }
    await screenshot(page, "leaderboard")
    await expectAccessible(page, "the leaderboard page")

    await page.getByRole("link", { name: "Human evaluation" }).click()
    await page.getByRole("heading", { name: "Human evaluation", level: 1 }).waitFor()
    await page.getByText("Shared documents", { exact: true }).click()
    await page.getByLabel("Files to share").setInputFiles({ name: "policy.md", mimeType: "text/markdown", buffer: Buffer.from("# Policy\nBe brief.") })
    await page.getByRole("button", { name: "Upload shared documents" }).click()
    await page.getByRole("cell", { name: "policy.md", exact: true }).waitFor()
    await page.getByLabel("Attachments").setInputFiles({ name: "ticket.txt", mimeType: "text/plain", buffer: Buffer.from("Customer cannot sign in.") })
    await page.getByLabel("Input").fill("How do I reset my password?")
    await page.getByRole("button", { name: "Create case" }).click()
    await page.getByRole("heading", { name: "Case · blind review" }).waitFor()
    await page.getByText("ticket.txt (this case)").waitFor()
    await page.getByText("policy.md (shared)").waitFor()
    await expectAccessible(page, "a new case")

    await page.getByRole("button", { name: "Generate responses" }).click()
    await page.getByRole("heading", { name: /^Response B/ }).waitFor()
    expect(fake.seen.filter((s) => s.path.endsWith("/chat/completions"))).toHaveLength(2)
    // blind: nothing on the page says which candidate gave which answer
    const blind = await page.locator("main").innerText()
    expect(blind).not.toContain("secret-alpha")
    expect(blind).not.toContain("secret-beta")
    // the candidates got the input with the case's document and the shared one
    expect(blind).toContain("echo: Document: ticket.txt")
    expect(blind).toContain("Be brief.")
    await screenshot(page, "case-blind")
    await expectAccessible(page, "a case under blind review")
    await page.setViewportSize({ width: 390, height: 844 })
    await screenshot(page, "case-blind-phone")
    await expectAccessible(page, "a case under blind review on a phone")
    await page.setViewportSize({ width: 1280, height: 900 })

    // verdicts by keyboard: c for the selected response (A), which moves on to B, then i
    await page.locator("body").click({ position: { x: 5, y: 5 } })
    await page.keyboard.press("c")
    await page.keyboard.press("i")
    expect(await page.getByRole("group", { name: "Verdict for response A" }).getByLabel("Correct", { exact: true }).isChecked()).toBe(true)
    expect(await page.getByRole("group", { name: "Verdict for response B" }).getByLabel("Incorrect", { exact: true }).isChecked()).toBe(true)
    await page.getByLabel("Reference answer").fill("Use the reset link on the sign-in page.")
    await page.getByRole("button", { name: "Save draft" }).click()
    await page.getByRole("status").filter({ hasText: "Draft saved." }).waitFor()
    // the draft still hides the candidates
    expect(await page.locator("main").innerText()).not.toContain("secret-alpha")

    await page.getByRole("button", { name: "Confirm review" }).click()
    await page.getByRole("heading", { name: "Case · revealed" }).waitFor()
    const revealed = await page.locator("main").innerText()
    expect(revealed).toContain("secret-alpha")
    expect(revealed).toContain("secret-beta")
    await screenshot(page, "case-revealed")
    await expectAccessible(page, "a revealed case")

    // the winner is the one judged correct
    const correct = (await page.getByRole("heading", { name: /^Response A/ }).innerText()).match(/secret-\w+/)?.[0]
    await page.getByRole("link", { name: "All cases" }).click()
    await page.getByRole("table", { name: "Ranking" }).waitFor()
    const first = page.getByRole("table", { name: "Ranking" }).getByRole("row").nth(1)
    expect(await first.innerText()).toContain(correct!)
    expect(await first.innerText()).toContain("1 of 1")
    expect(await page.getByRole("img", { name: /Human review scores/ }).count()).toBe(1)
    await screenshot(page, "human-summary")
    await expectAccessible(page, "the human evaluation summary")

    const downloading = page.waitForEvent("download")
    await page.getByRole("button", { name: "Download export" }).click()
    const download = await downloading
    const exported = JSON.parse(await streamText(await download.createReadStream()))
    expect(exported).toHaveLength(1)
    expect(exported[0].reference).toBe("Use the reset link on the sign-in page.")
    expect(exported[0].accepted_answers.map((a: { name: string }) => a.name)).toEqual([correct])

    // every generated response is a trace of source manual
    await page.getByRole("link", { name: "Leaderboard", exact: true }).click()
    await page.getByRole("link", { name: "Traces" }).click()
    await page.getByLabel("Source").selectOption("manual")
    await expect.poll(() => page.getByRole("table", { name: "Traces" }).getByRole("row").count()).toBe(3)
    await expectAccessible(page, "the traces page")
    await page.getByRole("link", { name: "Leaderboard", exact: true }).click()
    await page.getByRole("link", { name: "Human evaluation" }).click()
    await page.getByRole("table", { name: "Ranking" }).waitFor()

    await page.setViewportSize({ width: 390, height: 844 })
    await screenshot(page, "human-summary-phone")
    await expectAccessible(page, "the human evaluation summary on a phone")
    await page.context().close()
  }, 90_000) // a dozen pages with axe on each: 15–21 s in CI, past the default 30 s once on a loaded machine

  it("sends the reader back to sign-in when the session ends, and then to the same page", async () => {
    const page = await newPage(browser)
    await page.goto(`${podium.url}/#/tokens`)
    // the web session ends at the token's exp: 3 to 4 s from now
    await page.getByLabel("Session token").fill(await session("browser-expiring", { expiresIn: "4s" }))
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "API tokens", level: 1 }).waitFor()
    await new Promise((resolve) => setTimeout(resolve, 4_500))
    await page.getByLabel("Token name").fill("too late")
    await page.getByRole("button", { name: "Create token" }).click()
    await page.getByRole("alert").filter({ hasText: "Your session has ended" }).waitFor()
    await page.getByLabel("Session token").fill(await session("browser-expiring"))
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "API tokens", level: 1 }).waitFor()
    expect(await page.getByRole("cell", { name: "too late", exact: true }).count()).toBe(0)
    await page.context().close()
  })

  it("creates an API token whose secret is shown once and works, and revokes it", async () => {
    const page = await signIn("browser-tokens")
    await page.getByRole("link", { name: "API tokens" }).click()
    await page.getByRole("heading", { name: "API tokens", level: 1 }).waitFor()
    await page.getByLabel("Token name").fill("ci deploys")
    await page.getByRole("button", { name: "Create token" }).click()
    const secretField = page.getByLabel("Token secret")
    await secretField.waitFor()
    const secret = await secretField.inputValue()
    expect(secret.length).toBeGreaterThan(20)
    await page.getByRole("cell", { name: "ci deploys", exact: true }).waitFor()
    await page.getByRole("cell", { name: "browser-tokens@example.com", exact: true }).waitFor() // who made it
    await screenshot(page, "tokens")
    await expectAccessible(page, "the API tokens page")

    expect((await podium.request("GET", "/api/leaderboards", { token: secret })).status).toBe(200)
    // the list never shows the secret, and leaving the page forgets it
    expect(await page.getByRole("table", { name: "API tokens" }).innerText()).not.toContain(secret)
    await page.getByRole("link", { name: "Leaderboards" }).click()
    await page.getByRole("link", { name: "API tokens" }).click()
    await page.getByRole("cell", { name: "ci deploys", exact: true }).waitFor()
    expect(await page.getByLabel("Token secret").count()).toBe(0)

    await page.getByRole("button", { name: "Revoke ci deploys" }).click()
    await expect.poll(() => page.getByRole("button", { name: "Revoke ci deploys" }).count()).toBe(0)
    expect((await podium.request("GET", "/api/leaderboards", { token: secret })).status).toBe(401)
    await page.context().close()
  })

  it("runs a leaderboard and shows the run's progress, then its ranking, chart and rows", async () => {
    const page = await signIn("browser-runs")
    await page.getByLabel("Name", { exact: true }).fill("Exact answers")
    // exact match is the form's default, as it is the API's
    expect(await page.getByLabel("Evaluation").inputValue()).toBe("exact")
    await page.getByLabel("Dataset URL").fill(`${models.url}/data.jsonl`)
    await page.getByRole("button", { name: "Create leaderboard" }).click()
    await page.getByRole("heading", { name: "Exact answers", level: 1 }).waitFor()
    for (const name of ["right", "partly"]) {
      await page.getByLabel("Candidate name").fill(name)
      await page.getByLabel("Endpoint URL").fill(`${models.url}/v1`)
      await page.getByLabel("Model name").fill(name)
      await page.getByRole("button", { name: "Add candidate" }).click()
      await page.getByRole("button", { name: `Remove ${name}` }).waitFor()
    }

    // settings: a schedule and a new system prompt, saved and shown again
    await page.getByText("Settings", { exact: true }).click()
    await page.getByLabel("Run schedule (cron)").fill("0 6 * * 1")
    await page.getByLabel("Time zone").fill("Europe/Paris")
    await page.getByLabel("System prompt").fill("Answer with the code only.")
    await page.getByRole("button", { name: "Save settings" }).click()
    await page.getByText("Next scheduled run:").waitFor()
    await expectAccessible(page, "a leaderboard with its settings open")

    models.delayMs = 150
    await page.getByRole("button", { name: "Start a run" }).click()
    await page.getByRole("heading", { name: /^Run · (queued|running)$/ }).waitFor()
    const progress = page.getByRole("progressbar", { name: "Run progress" })
    // queued, the run does not know its cells yet; once running, 10 rows × 2 candidates
    await expect.poll(() => progress.getAttribute("max"), { timeout: 10_000 }).toBe("20")
    await screenshot(page, "run-progress")
    await page.getByRole("heading", { name: "Run · succeeded" }).waitFor({ timeout: 20_000 })
    models.delayMs = 0
    expect(await progress.getAttribute("value")).toBe("20")

    const results = page.getByRole("table", { name: "Run results" })
    // 10 rows, 4 discordant all for right: exact McNemar p = 2 × 0.5⁴ = 0.125 ≥ α 0.05, so the two are tied
    expect(await results.getByRole("row").nth(1).innerText()).toMatch(/1 \(winner\)\s+rank band\s+1–2\s+right\s*tied\s+with partly\s+100\.0%/)
    expect(await results.getByRole("row").nth(2).innerText()).toMatch(/2\s+rank band\s+1–2\s+partly\s*tied\s+with right\s+60\.0%/)
    const decision = page.getByRole("region", { name: "Serving decision" })
    expect(await decision.innerText()).toMatch(/Decision\s+The serving model changed: nothing served before, now right serves \(chosen among statistically tied candidates: the cheapest of them\)\s+Why\s+first to serve: right has the best/)
    expect(await page.getByRole("img", { name: /Run scores: right: 100\.0%/ }).count()).toBe(1)
    expect(await page.getByRole("table", { name: "Answers per row" }).getByRole("row").count()).toBe(11)
    await screenshot(page, "run-results")
    await expectAccessible(page, "a finished run")

    await page.getByRole("link", { name: "Leaderboard", exact: true }).click()
    await page.getByRole("table", { name: "Runs" }).getByText("succeeded").waitFor()
    await page.getByText("serving right (a run's decision)").waitFor()
    expect(await page.getByLabel("System prompt").inputValue()).toBe("Answer with the code only.")

    // the serving history: the run's decision, which nothing served before, so there is nothing to roll back to
    await page.getByRole("link", { name: "Serving history" }).click()
    const history = page.getByRole("table", { name: "Serving history" })
    await history.waitFor()
    expect(await history.getByRole("row").nth(1).innerText()).toMatch(/Run decision\s+nothing\s*→\s*to\s+right\s+Run [0-9a-f]{8}\s+first to serve: right/)
    await page.getByRole("button", { name: "Roll back" }).click()
    await page.getByRole("button", { name: "Confirm rollback" }).click()
    await page.getByRole("alert").filter({ hasText: "There is nothing to roll back to: nothing served before right, the first candidate to serve." }).waitFor()
    await expectAccessible(page, "the serving history")
    // a manual choice, then rolled back from its history: right serves again, and the rollback is the newest entry
    await page.getByRole("link", { name: "Leaderboard", exact: true }).click()
    await page.getByRole("button", { name: "Serve partly" }).click()
    await page.getByText("serving partly (chosen)").waitFor()
    await page.getByRole("link", { name: "Serving history" }).click()
    await page.getByRole("button", { name: "Roll back" }).click()
    await page.getByText("Serve right again instead of partly?").waitFor()
    await page.getByRole("button", { name: "Confirm rollback" }).click()
    await page.getByRole("status").filter({ hasText: "Rolled back: right serves again." }).waitFor()
    await expect.poll(() => history.getByRole("row").count()).toBe(4)
    expect(await history.getByRole("row").nth(1).innerText()).toMatch(/Rollback\s+partly\s*→\s*to\s+right\s+User /)
    expect(await history.getByRole("row").nth(2).innerText()).toMatch(/Manual choice\s+right\s*→\s*to\s+partly/)
    await page.getByText("Serving now: right (chosen by hand)").waitFor()
    await screenshot(page, "serving-history")

    // older entries a page of 20 at a time: 18 more manual choices (through the API) make 21
    const leaderboardId = /#\/leaderboards\/([0-9a-f-]{36})/.exec(page.url())![1]!
    const token = await session("browser-runs")
    const { body } = await podium.request("GET", `/api/leaderboards/${leaderboardId}`, { token })
    const idOf = (name: string) => body.models.find((m: { name: string }) => m.name === name).id
    for (let i = 0; i < 18; i++) {
      const chosen = idOf(i % 2 === 0 ? "partly" : "right")
      const json = { chosen_model_strategy: "manual", chosen_leaderboard_model_id: chosen }
      expect((await podium.request("PATCH", `/api/leaderboards/${leaderboardId}`, { token, json })).status).toBe(200)
    }
    await page.getByRole("link", { name: "Leaderboard", exact: true }).click()
    await page.getByRole("link", { name: "Serving history" }).click()
    await expect.poll(() => history.getByRole("row").count()).toBe(21)
    await page.getByRole("button", { name: "Older entries" }).click()
    await expect.poll(() => history.getByRole("row").count()).toBe(22)
    expect(await history.getByRole("row").nth(21).innerText()).toMatch(/Run decision/)
    expect(await page.getByRole("button", { name: "Older entries" }).count()).toBe(0)
    await page.context().close()
  }, 60_000) // a run, then the serving history and two rollbacks: 18 s alone, and the machine is shared
})

describe("workspace and datasets in the web app", () => {
  it("invites a member and revokes the invite, and stores a router token after the router accepts it", async () => {
    const page = await signIn("browser-admin")
    await page.getByRole("link", { name: "Workspace" }).click()
    await page.getByRole("table", { name: "Members" }).getByText("browser-admin@example.com").waitFor()
    await page.getByLabel("Email").fill("reviewer@example.com")
    await page.getByLabel("Role").selectOption("member")
    await page.getByRole("button", { name: "Send invite" }).click()
    const link = page.getByRole("status").getByRole("link")
    await link.waitFor()
    expect(await link.getAttribute("href")).toMatch(/invite_id=[0-9a-f-]{36}/)
    await page.getByRole("table", { name: "Invites" }).getByText("reviewer@example.com").waitFor()
    // this server has no SMTP_URL: the mail was logged, not sent, and the page says so beside the link
    await page.getByRole("table", { name: "Invites" }).getByRole("row", { name: /reviewer@example\.com/ }).getByText("logged, no SMTP").waitFor()
    await page.getByRole("status").filter({ hasText: "logged, no SMTP" }).waitFor()
    expect(await page.getByRole("status").textContent()).not.toMatch(/\bsent\b/)
    await expectAccessible(page, "the workspace page")
    await screenshot(page, "workspace")
    await page.getByRole("button", { name: "Revoke the invite of reviewer@example.com" }).click()
    await expect.poll(() => page.getByRole("button", { name: "Revoke the invite of reviewer@example.com" }).count()).toBe(0)

    // an invite link lands on sign-in, and then in the inviting workspace
    const created = await podium.request("POST", "/api/leaderboards", {
      token: await session("browser-admin"),
      json: { name: "Team board", dataset_type: "PUSH" }
    })
    expect(created.status).toBe(201)
    await page.getByLabel("Email").fill("browser-invitee@example.com")
    await page.getByRole("button", { name: "Send invite" }).click()
    await page.getByRole("table", { name: "Invites" }).getByText("browser-invitee@example.com").waitFor()
    const acceptUrl = new URL((await page.getByRole("status").getByRole("link").getAttribute("href"))!)
    const invitee = await newPage(browser)
    await invitee.goto(`${podium.url}/${acceptUrl.search}`)
    await invitee.getByText("You were invited to a workspace").waitFor()
    await invitee.getByLabel("Session token").fill(await session("browser-invitee"))
    await invitee.getByRole("button", { name: "Sign in" }).click()
    await invitee.getByRole("link", { name: "Team board" }).waitFor()
    expect(new URL(invitee.url()).search).toBe("")
    // the invitee's own workspace is one choice away in the header, and has no such board
    await invitee.getByRole("banner").getByLabel("Workspace").selectOption({ label: "browser-invitee@example.com (yours)" })
    await invitee.getByText("No leaderboards yet").waitFor()
    await invitee.context().close()
    // a reload keeps the admin signed in (the web session's cookie)
    await page.reload()
    await page.getByRole("link", { name: "Workspace" }).click()
    await page.getByRole("table", { name: "Members" }).getByText("browser-invitee@example.com").waitFor()

    await page.getByLabel("Provider token").fill("sk-or-v1-wrong")
    await page.getByRole("button", { name: "Validate and store" }).click()
    await page.getByRole("alert").filter({ hasText: /./ }).first().waitFor()
    await page.getByLabel("Provider token").fill(routerKey)
    await page.getByRole("button", { name: "Validate and store" }).click()
    await page.getByRole("status").filter({ hasText: "The router token is valid" }).waitFor()
    expect(models.seen.filter((r) => r.path.endsWith("/key")).map((r) => r.authorization)).toEqual([
      "Bearer sk-or-v1-wrong",
      `Bearer ${routerKey}`
    ])
    await page.context().close()
  })

  it("consolidates pushed rows into a version and downloads it", async () => {
    const page = await signIn("browser-data")
    await page.getByLabel("Name", { exact: true }).fill("Pushed questions")
    await page.getByRole("button", { name: "Create leaderboard" }).click()
    await page.getByRole("heading", { name: "Pushed questions", level: 1 }).waitFor()
    const leaderboardId = /#\/leaderboards\/([0-9a-f-]{36})/.exec(page.url())![1]!
    const pushed = await podium.request("POST", `/v1/leaderboard/${leaderboardId}/dataset/push`, {
      token: await session("browser-data"),
      json: questions.slice(0, 3)
    })
    expect(pushed.status).toBe(202)

    await page.getByRole("link", { name: "Dataset" }).click()
    await page.getByText("3 rows pending").waitFor()
    await page.getByRole("button", { name: "Consolidate now" }).click()
    await page.getByRole("table", { name: "Dataset versions" }).getByRole("cell", { name: "1", exact: true }).first().waitFor()
    await expectAccessible(page, "the dataset page")
    await screenshot(page, "dataset")
    const downloading = page.waitForEvent("download")
    await page.getByRole("button", { name: "Download version 1" }).click()
    const lines = (await streamText(await (await downloading).createReadStream())).trim().split("\n").map((l) => JSON.parse(l))
    expect(lines.map((l) => l.input)).toEqual(["q1", "q2", "q3"])

    await page.getByRole("button", { name: "Create a push token" }).click()
    const secret = await page.getByLabel("Push token").inputValue()
    expect(secret).toMatch(/^hpd_/)
    const status = await podium.request("GET", `/v1/leaderboard/${leaderboardId}/dataset/status`, {
      headers: { "x-service-push-token": secret }
    })
    expect(status.status).toBe(200)
    await page.context().close()
  })
})

describe("signing in with an OpenID Connect provider", () => {
  it("runs the authorization-code flow with PKCE, and the ID token is the session", async () => {
    const provider = await startOidcFake()
    const oidcPodium = await startPodium({ OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: provider.clientId, SESSION_JWT_SECRET: undefined })
    try {
      const page = await newPage(browser)
      await page.goto(`${oidcPodium.url}/?invite_id=00000000-0000-4000-8000-000000000000`)
      const host = new URL(provider.issuer).host
      await page.getByText("You were invited to a workspace").waitFor()
      await expectAccessible(page, "the sign-in page with a provider")
      await screenshot(page, "sign-in-oidc")
      await page.getByRole("button", { name: `Sign in with ${host}` }).click()
      await page.getByRole("heading", { name: "Leaderboards", level: 1 }).waitFor()
      // the code went to the provider with its verifier, and left the address bar
      expect(provider.tokenRequests).toHaveLength(1)
      expect(provider.tokenRequests[0]?.["grant_type"]).toBe("authorization_code")
      expect(provider.tokenRequests[0]?.["code_verifier"]?.length).toBeGreaterThanOrEqual(43)
      expect(new URL(page.url()).search).toBe("")
      // signed in as the provider's user: the server made its workspace and lists its (no) leaderboards
      await page.getByText("No leaderboards yet").waitFor()

      // a code cannot be used twice: going back to it is refused with a message
      await page.goto(`${oidcPodium.url}/?code=used&state=stale`)
      await page.getByRole("alert").waitFor()
      expect(await page.getByRole("heading", { name: "Leaderboards" }).count()).toBe(0)
      await page.context().close()
    } finally {
      await oidcPodium.stop()
      await provider.close()
    }
  })

  it("says so on the page when the provider cannot be reached, instead of leaving for a browser error", async () => {
    const provider = await startOidcFake()
    const oidcPodium = await startPodium({ OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: provider.clientId, SESSION_JWT_SECRET: undefined })
    try {
      const page = await newPage(browser)
      await page.goto(oidcPodium.url)
      const host = new URL(provider.issuer).host
      const button = page.getByRole("button", { name: `Sign in with ${host}` })
      await button.waitFor()
      // the page was served while the provider was up; then it stops
      await provider.close()
      await button.click()
      await page.getByRole("alert").filter({ hasText: `The identity provider (${host}) cannot be reached` }).waitFor()
      expect(new URL(page.url()).origin).toBe(oidcPodium.url)
      expect(await button.isEnabled()).toBe(true)
      await page.context().close()
    } finally {
      await oidcPodium.stop()
      await provider.close()
    }
  })

  it("refuses OIDC_ISSUER without OIDC_CLIENT_ID at start", async () => {
    await expect(startPodium({ OIDC_ISSUER: "https://id.example.com" })).rejects.toThrow(/OIDC_ISSUER and OIDC_CLIENT_ID/)
  })
})

