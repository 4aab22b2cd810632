import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, sep } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { chromiumExecutable, launchBrowser } from "./support/Browser.ts"

/**
 * Two checkouts or CI jobs on one host test at once: each run unpacks Chromium into a directory of
 * its own, so none starts an executable another is still writing (`spawn ETXTBSY`).
 */
const dirs: Array<string> = []
const runDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "podium-browser-run-"))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

describe("Chromium for browser tests", () => {
  it("is unpacked into each run's own directory, and two runs launch it at the same time", async () => {
    const [first, second] = [runDir(), runDir()]
    const [firstPath, secondPath] = await Promise.all([chromiumExecutable(first), chromiumExecutable(second)])
    expect(firstPath.startsWith(first + sep), firstPath).toBe(true)
    expect(secondPath.startsWith(second + sep), secondPath).toBe(true)

    const browsers = await Promise.all([launchBrowser(first), launchBrowser(second)])
    for (const browser of browsers) {
      expect(browser.isConnected()).toBe(true)
      await browser.close()
    }
  }, 60_000)
})
