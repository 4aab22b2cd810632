import AxeBuilder from "@axe-core/playwright"
import chromium from "@sparticuz/chromium"
import { existsSync, mkdirSync } from "node:fs"
import { mkdtemp, rename, rm } from "node:fs/promises"
import { join } from "node:path"
import { type Browser, chromium as playwright, type Page } from "playwright-core"
import { expect } from "vitest"

/**
 * The Chromium the `@sparticuz/chromium` package ships, unpacked into `dir` (a test run's own):
 * the package unpacks into `os.tmpdir()`, one path for every checkout on the host, and another run
 * could start an executable that is still being written (`spawn ETXTBSY`). It unpacks into a fresh
 * directory beside the final one, renamed into place whole, so two files of one run cannot meet a
 * half-written browser either.
 */
export const chromiumExecutable = async (dir: string): Promise<string> => {
  const unpacked = join(dir, "chromium")
  const executable = join(unpacked, "chromium")
  if (existsSync(executable)) return executable
  mkdirSync(dir, { recursive: true })
  const staging = await mkdtemp(join(dir, "chromium-unpacking-"))
  // the package reads os.tmpdir() (TMPDIR) only synchronously, while the call starts
  const previous = process.env.TMPDIR
  process.env.TMPDIR = staging
  let unpacking: Promise<string>
  try {
    unpacking = chromium.executablePath()
  } finally {
    if (previous === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = previous
  }
  await unpacking
  // another file of this run may have renamed its copy into place first: then use that one
  await rename(staging, unpacked).catch(async (error) => {
    await rm(staging, { recursive: true, force: true })
    if (!existsSync(executable)) throw error
  })
  return executable
}

/**
 * Real Chromium for browser tests (see `chromiumExecutable`; nothing is downloaded), driven by
 * playwright-core. The flags keep it off the network this machine does not have.
 */

export const launchBrowser = async (dir: string): Promise<Browser> =>
  playwright.launch({
    executablePath: await chromiumExecutable(dir),
    // the package's flags are for one-shot serverless runs; one process per browser is not what a test wants
    args: [
      ...chromium.args.filter((flag) => flag !== "--single-process" && flag !== "--no-zygote"),
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run"
    ],
    headless: true
  })

/** A page in a context of its own (axe opens a second page in the same context to finish its run). */
export const newPage = async (browser: Browser, viewport = { width: 1280, height: 900 }): Promise<Page> => {
  const context = await browser.newContext({ viewport })
  // a step that cannot happen fails with its own name, well before the test's time-out
  context.setDefaultTimeout(10_000)
  return context.newPage()
}

/** A new page signed in through the sign-in form with a session `token`, once the leaderboards list shows. */
export const signInThroughForm = async (
  browser: Browser,
  url: string,
  token: string,
  viewport = { width: 1280, height: 900 }
): Promise<Page> => {
  const page = await newPage(browser, viewport)
  await page.goto(url)
  await page.getByLabel("Session token").fill(token)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.getByRole("heading", { name: "Leaderboards", level: 1 }).waitFor()
  return page
}

export const screenshotsDir = join(import.meta.dirname, "..", "..", "test-results")

/** A full-page screenshot in `test-results/<name>.png`, for people to look at. */
export const screenshot = async (page: Page, name: string) => {
  mkdirSync(screenshotsDir, { recursive: true })
  await page.screenshot({ path: join(screenshotsDir, `${name}.png`), fullPage: true })
}

/** axe-core on the page as it is: no serious or critical violation (WCAG 2 A and AA rules, and best practice). */
export const expectAccessible = async (page: Page, where: string) => {
  const { violations } = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]).analyze()
  const serious = violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)
  expect(serious, `accessibility of ${where}`).toEqual([])
}
