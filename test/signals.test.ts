import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { freePort } from "./support/Ports.ts"

const bin = join(import.meta.dirname, "..", "packages", "server", "src", "bin.ts")
const children: Array<ChildProcess> = []
afterAll(() => {
  for (const child of children) if (child.exitCode === null) process.kill(-child.pid!, "SIGKILL")
})


/** `podium serve` in a process group of its own, as a terminal runs it; resolves once it listens. */
const serve = async (env: Record<string, string>) => {
  const child = spawn(process.execPath, [bin, "serve"], {
    detached: true,
    env: { ...process.env, PORT: String(await freePort()), LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.push(child)
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (chunk) => stdout += chunk)
  child.stderr!.on("data", (chunk) => stderr += chunk)
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  for (let i = 0; i < 600 && !stdout.includes("podium listening"); i++) {
    if (child.exitCode !== null) throw new Error(`podium exited early: ${stderr}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  expect(stdout).toContain("podium listening")
  return { child, exited, output: () => ({ stdout, stderr }) }
}

describe("Ctrl-C in a terminal (SIGINT to the whole process group)", () => {
  it("stops quietly with exit 0, and stops the embedded database cleanly", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "podium-sigint-"))
    const { child, exited, output } = await serve({ DATA_DIR: dataDir, DATABASE_URL: "" })
    const postmaster = join(dataDir, "pg", "postmaster.pid")
    expect(existsSync(postmaster)).toBe(true)
    const pid = Number(readFileSync(postmaster, "utf8").split("\n")[0])

    const before = output().stdout.length
    // how long stopping takes is a benchmark's to measure, not a test's (on 2 busy cores it varies)
    process.kill(-child.pid!, "SIGINT") // the terminal's group: postgres is not in it
    const code = await exited

    expect(code).toBe(0)
    const { stderr } = output()
    const stdout = output().stdout.slice(before) // what stopping printed
    expect(stderr).toBe("")
    // only INFO lines: no warning, no stack trace
    expect(stdout.split("\n").filter((line) => line !== "" && !line.includes(`"level":"INFO"`))).toEqual([])
    expect(stdout).toContain("stopped postgres")
    expect(existsSync(postmaster)).toBe(false) // a clean shutdown removes it
    // gone, or a zombie waiting for this container's init to reap it
    const stat = `/proc/${pid}/stat`
    if (existsSync(stat)) expect(readFileSync(stat, "utf8").split(") ")[1]![0]).toBe("Z")
  }, 120_000)
})
