import { decodeJwt } from "jose"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { expectAccessible, launchBrowser, newPage, screenshot } from "./support/Browser.ts"
import { type Podium, session, startPodium } from "./support/Podium.ts"

/**
 * The web app's session in real Chromium: a reload keeps the reader signed in and on the same
 * page; the session is an HttpOnly cookie no script on the page reads; a request from the page
 * without the CSRF token that changes state is refused; signing out ends it for good.
 */

let podium: Podium
let browser: Browser

beforeAll(async () => {
  ;[podium, browser] = await Promise.all([startPodium(), launchBrowser(inject("podiumTestRunDir"))])
})
afterAll(async () => {
  await browser?.close()
  await podium?.stop()
})

/** What a script on the page gets for `expression` (evaluated in the page, as its own code would be). */
type Answer = { readonly status: number; readonly code: string | undefined }
const fetchFromPage = (method: string, path: string, body?: unknown) =>
  `fetch(${JSON.stringify(path)}, { method: ${JSON.stringify(method)}, headers: { "content-type": "application/json" }` +
  `${body === undefined ? "" : `, body: ${JSON.stringify(JSON.stringify(body))}`} })` +
  ".then(async (r) => ({ status: r.status, code: r.status < 300 ? undefined : (await r.json()).error.code }))"

describe("the web session in the browser", () => {
  it("survives a reload on the same page, stays out of scripts' reach, refuses requests without the CSRF token, and ends at sign-out", async () => {
    const page = await newPage(browser)
    const token = await session("browser-session")
    await page.goto(`${podium.url}/#/tokens`)
    await page.getByLabel("Session token").fill(token)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "API tokens", level: 1 }).waitFor()

    // the browser keeps the session as the server set it: HttpOnly, SameSite=Strict, until the token's exp at most
    const stored = (await page.context().cookies()).find((cookie) => cookie.name === "podium_session")
    expect(stored).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/", secure: false })
    expect(stored!.value).toMatch(/^pws_/)
    expect(stored!.expires).toBeLessThanOrEqual(decodeJwt(token).exp!)
    expect(stored!.expires).toBeGreaterThan(Date.now() / 1000 + 3000)
    // no script on the page reads it, and neither it nor the token is kept anywhere a script could look
    expect(await page.evaluate("document.cookie")).not.toContain("podium_session")
    const storage = await page.evaluate("JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage)])")
    expect(storage).not.toContain(stored!.value)
    expect(storage).not.toContain(token)

    // a reload: still signed in, on the same page
    await page.reload()
    await page.getByRole("heading", { name: "API tokens", level: 1 }).waitFor()
    expect(new URL(page.url()).hash).toBe("#/tokens")
    expect(await page.getByLabel("Session token").count()).toBe(0)
    await screenshot(page, "session-after-reload")
    await expectAccessible(page, "the tokens page after a reload")
    await page.getByRole("link", { name: "Workspace" }).click()
    await page.getByRole("heading", { name: "Workspace", level: 1 }).waitFor()
    await page.reload()
    await page.getByRole("heading", { name: "Workspace", level: 1 }).waitFor()
    expect(new URL(page.url()).hash).toBe("#/workspace")

    // a script's own request: it may read, but a change without the CSRF token is refused
    expect(await page.evaluate(fetchFromPage("GET", "/api/tokens"))).toEqual<Answer>({ status: 200, code: undefined })
    expect(await page.evaluate(fetchFromPage("POST", "/api/tokens", { name: "forged" })))
      .toEqual<Answer>({ status: 403, code: "csrf_token_required" })
    expect(await page.evaluate(fetchFromPage("DELETE", "/api/session"))).toEqual<Answer>({ status: 403, code: "csrf_token_required" })
    // the app's own requests send it
    await page.getByRole("link", { name: "API tokens" }).click()
    await page.getByLabel("Token name").fill("made by the app")
    await page.getByRole("button", { name: "Create token" }).click()
    await page.getByRole("cell", { name: "made by the app", exact: true }).waitFor()
    expect(await page.getByRole("cell", { name: "forged", exact: true }).count()).toBe(0)

    // sign-out ends the session on the server: a reload shows sign-in, and the old cookie signs nothing in
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByRole("heading", { name: "Sign in to Podium" }).waitFor()
    expect((await page.context().cookies()).some((cookie) => cookie.name === "podium_session")).toBe(false)
    await page.reload()
    await page.getByRole("heading", { name: "Sign in to Podium" }).waitFor()
    expect(await page.getByRole("heading", { name: "API tokens" }).count()).toBe(0)
    await screenshot(page, "session-signed-out")
    await expectAccessible(page, "the sign-in page after signing out")
    const replayed = await podium.request("GET", "/api/tokens", { headers: { cookie: `podium_session=${stored!.value}` } })
    expect(replayed.status).toBe(401)
    await page.context().close()
  })

  it("a second tab shares the session, and signing out in one ends it in the other at its next request", async () => {
    const page = await newPage(browser)
    await page.goto(`${podium.url}/#/tokens`)
    await page.getByLabel("Session token").fill(await session("browser-session-tabs"))
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "API tokens", level: 1 }).waitFor()
    const other = await page.context().newPage()
    await other.goto(`${podium.url}/#/workspace`)
    await other.getByRole("heading", { name: "Workspace", level: 1 }).waitFor()
    await other.getByRole("button", { name: "Sign out" }).click()
    await other.getByRole("heading", { name: "Sign in to Podium" }).waitFor()
    await page.getByLabel("Token name").fill("too late")
    await page.getByRole("button", { name: "Create token" }).click()
    await page.getByRole("alert").filter({ hasText: "Your session has ended" }).waitFor()
    await page.context().close()
  })
})
