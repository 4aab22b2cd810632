import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import { launchBrowser } from "../test/support/Browser.ts"
import { benchSession, startBenchPodium } from "./Benchmark.ts"
import type { SelfRunningBenchmark } from "./InferenceBench.ts"

/** Page loads per measurement. */
const loads = 20

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const p95 = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.95) - 1]!
const ms = (x: number) => `${x.toFixed(0)} ms`

/**
 * The web app in real Chromium on loopback (issue 15: "loads in under 1 s, under 300 kB of
 * JavaScript gzipped"): the script's gzipped size, and the time from navigation to a page a person
 * can use — the sign-in form, cold (a new browser context: nothing cached) and warm (a reload), and
 * signed in to the leaderboards list (the typed client's first call answered).
 */
export const WebBench: SelfRunningBenchmark = {
  name: "web",
  description: "the web app in Chromium: JavaScript gzipped, page load cold and warm, signed in",
  scenarios: async () => [],
  run: async (databases) => {
    const server = await startBenchPodium(await databases.create())
    const browserDir = mkdtempSync(join(tmpdir(), "podium-bench-browser-"))
    const browser = await launchBrowser(browserDir)
    try {
      const page = await (await fetch(`${server.url}/`)).text()
      const script = /src="(\/assets\/[^"]+\.js)"/.exec(page)![1]!
      const bytes = new Uint8Array(await (await fetch(`${server.url}${script}`)).arrayBuffer())
      const gzipped = gzipSync(bytes).length

      const cold: Array<number> = []
      const warm: Array<number> = []
      const signedIn: Array<number> = []
      const jwt = await benchSession("bench-web")
      for (let i = 0; i < loads; i++) {
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
        const tab = await context.newPage()
        let started = performance.now()
        await tab.goto(server.url)
        await tab.getByLabel("Session token").waitFor()
        cold.push(performance.now() - started)
        started = performance.now()
        await tab.reload()
        await tab.getByLabel("Session token").waitFor()
        warm.push(performance.now() - started)
        await tab.getByLabel("Session token").fill(jwt)
        started = performance.now()
        await tab.getByRole("button", { name: "Sign in" }).click()
        await tab.getByRole("heading", { name: "Leaderboards", level: 1 }).waitFor()
        await tab.getByText("No leaderboards yet").waitFor()
        signedIn.push(performance.now() - started)
        await context.close()
      }
      return {
        results: [],
        notes: [
          `web: JavaScript ${bytes.length} bytes, ${gzipped} gzipped (budget 300,000)`,
          `web: ${loads} loads each, median / p95 — cold (new context, to the sign-in form) ${ms(median(cold))} / ${ms(p95(cold))}; ` +
          `warm (reload) ${ms(median(warm))} / ${ms(p95(warm))}; sign-in to the leaderboards list ${ms(median(signedIn))} / ${ms(p95(signedIn))} (budget 1 s)`
        ]
      }
    } finally {
      await browser.close()
      await server.stop()
      rmSync(browserDir, { recursive: true, force: true })
    }
  }
}
