import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { type OpenAiFake, startOpenAiFake } from "./fakes/OpenAiFake.ts"
import { freePort } from "./support/Ports.ts"

/**
 * The README's walkthrough, run as written: its shell blocks in order, from the start command to
 * the inference call. Only addresses change: Podium's port and the local model server's (a
 * loopback fake speaking OpenAI chat completions, standing in for Ollama).
 */
const root = join(import.meta.dirname, "..")
const readme = readFileSync(join(root, "README.md"), "utf8")
const section = readme.slice(readme.indexOf("## Five minutes with Podium"), readme.indexOf("## Production"))
const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!)


let server: ChildProcess | undefined
let fake: OpenAiFake | undefined
afterAll(async () => {
  if (server?.exitCode === null) process.kill(-server.pid!, "SIGINT")
  await new Promise((resolve) => server?.exitCode === null ? server.once("exit", resolve) : resolve(undefined))
  await fake?.close()
})

describe("the README walkthrough", () => {
  it("runs as written, up to a real inference call through a local OpenAI-compatible server", async () => {
    fake = await startOpenAiFake()
    const port = await freePort()
    const local = (script: string) =>
      script.replaceAll("127.0.0.1:8080", `127.0.0.1:${port}`).replaceAll("http://127.0.0.1:11434", fake!.url)
    const env = { ...process.env, DATA_DIR: mkdtempSync(join(tmpdir(), "podium-readme-")), DATABASE_URL: "", LOG_LEVEL: "warn" }

    // the start command, without `npm ci` (this checkout is installed)
    const [start, ...rest] = blocks
    expect(start).toContain("ALLOW_PRIVATE_NETWORK_TARGETS=true npm start")
    server = spawn("bash", ["-c", local(start!.replace(/^npm ci && /m, "")).replace(/npm start/, `PORT=${port} npm start`)], {
      cwd: root,
      env,
      detached: true,
      stdio: "ignore"
    })
    for (let i = 0; i < 600; i++) {
      const up = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)
      if (up) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }

    const upToInference = rest.slice(0, rest.findIndex((block) => block.includes("/inference")) + 1)
    expect(upToInference.length).toBeGreaterThanOrEqual(2)
    const { stdout } = await promisify(execFile)("bash", ["-euo", "pipefail", "-c", local(upToInference.join("\n"))], {
      cwd: root,
      env
    })

    expect(stdout).toContain(`"version":"0.1.0"`)
    expect(stdout).toMatch(/pod_[A-Za-z0-9_-]{20,}/) // the token, echoed
    const call = fake.seen.at(-1)!
    expect(call.path).toBe("/v1/chat/completions")
    expect(call.body).toMatchObject({
      model: "llama3.2",
      messages: [{ role: "system", content: "Answer briefly." }, { role: "user", content: "Where is my parcel?" }]
    })
    expect(stdout.trimEnd().endsWith(fake.sent.at(-1)!)).toBe(true) // the model's answer, byte for byte
  }, 120_000)
})
