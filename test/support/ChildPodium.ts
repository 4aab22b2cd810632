import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Podium } from "./Podium.ts"
import { freePort } from "./Ports.ts"

/** `podium serve` in a process of its own, for tests that kill it (`kill -9`) and start it again. */

const bin = join(import.meta.dirname, "..", "..", "packages", "server", "src", "bin.ts")
const children: Array<ChildProcess> = []
const dataDirs: Array<string> = []

/** Kills what is still running and removes the data directories (call it in afterAll). */
export const stopChildren = () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true })
}


/** `podium serve` as its own process; resolves once /healthz answers 200. */
export const serveChild = async (env: Record<string, string>) => {
  const port = await freePort()
  const dataDir = mkdtempSync(join(tmpdir(), "podium-child-"))
  dataDirs.push(dataDir)
  const child = spawn(process.execPath, [bin, "serve"], {
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: "Warn", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.push(child)
  let output = ""
  child.stdout!.on("data", (chunk) => output += chunk)
  child.stderr!.on("data", (chunk) => output += chunk)
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`podium serve exited early:\n${output}`)
    const healthy = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok, () => false)
    if (healthy) return { child, exited, url, output: () => output }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`podium serve was not healthy within 60 s:\n${output}`)
}

/** The typed client needs only the server's URL. */
export const at = (url: string) => ({ url }) as Podium
