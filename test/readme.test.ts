import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Api } from "@podium/adapters-http/api/Api"
import { OpenApi } from "effect/http-api"
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

/**
 * Whether a version is in an npm `engines` range, for the forms the lock holds (`>=22.19.0`,
 * `^20.19.0`, `20`, `10.*`, `>= 0.4`, several joined by `||`); any other form fails the test by name.
 */
const admits = (range: string, version: string): boolean => {
  const parse = (v: string) => v.split(".").map((part) => Number.parseInt(part, 10)).concat([0, 0, 0]).slice(0, 3)
  const compare = (a: ReadonlyArray<number>, b: ReadonlyArray<number>) =>
    a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!
  const have = parse(version)
  return range.split("||").some((alternative) =>
    alternative.trim().replace(/(>=|<=|>|<|\^)\s+/g, "$1").replace(/(\.[*xX])+/g, "").split(/\s+/).every((comparator) => {
      const match = /^(>=|<=|>|<|\^)?(\d+(?:\.\d+){0,2})$/.exec(comparator)
      if (match === null) throw new Error(`an engines range this test cannot read: ${range}`)
      const [, operator, bound] = match
      const want = parse(bound!)
      const order = compare(have, want)
      switch (operator) {
        case ">=": return order >= 0
        case "<=": return order <= 0
        case ">": return order > 0
        case "<": return order < 0
        case "^": return have[0] === want[0] && order >= 0
        default: return bound!.split(".").every((part, i) => Number(part) === have[i])
      }
    })
  )
}

describe("the Node.js the README asks for", () => {
  it("is package.json's engines; packages that want a newer Node run nothing on it during npm ci, and the README says so", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
    const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"))
    const minimum = /Only Node\.js \((\d+) or newer\)/.exec(readme)?.[1]
    expect(minimum, "the README names a minimum Node").toBeDefined()
    expect(pkg.engines?.node).toBe(`>=${minimum}`)
    // everything runs on the Node the `node` dependency brings, whatever npm runs on
    const bundled = lock.packages["node_modules/node"].version as string
    expect(pkg.dependencies.node).toBe(bundled)

    const wantNewer = Object.entries(lock.packages as Record<string, { engines?: { node?: string }; hasInstallScript?: boolean }>)
      .filter(([path, meta]) => path !== "" && meta.engines?.node !== undefined && !admits(meta.engines.node, `${minimum}.0.0`))
    expect(wantNewer.length, "packages npm warns about on the minimum").toBeGreaterThan(0)
    for (const [path, meta] of wantNewer) {
      expect(meta.hasInstallScript ?? false, `${path} runs an install script on the system Node`).toBe(false)
      expect(admits(meta.engines!.node!, bundled), `${path} runs on Node ${bundled}`).toBe(true)
    }
    // npm's warnings, as npm words them, are explained where the minimum is stated
    const paragraph = readme.slice(readme.indexOf("Only Node.js"), readme.indexOf("## Five minutes with Podium"))
    expect(paragraph).toContain("EBADENGINE")
  })
})

/**
 * Every route the README names in full (`METHOD /api/…` or `METHOD /v1/…`, methods joined by `|`
 * or "or", the path in backticks or not, across a line break), with `{…}` for any parameter.
 */
const namedRoutes = (text: string) =>
  [...text.matchAll(/\b((?:GET|POST|PUT|PATCH|DELETE)(?:(?:\||,? or )(?:GET|POST|PUT|PATCH|DELETE))*)`?\s+`?(\/(?:api|v1)\/[^\s`),;]*)/g)]
    .flatMap((match) =>
      match[1]!.split(/\||,? or /).map((method) => `${method} ${match[2]!.replace(/[.:]+$/, "").replace(/\{[^}]*\}/g, "{}")}`)
    )

describe("the README's routes", () => {
  it("every METHOD /path it names is a route of the OpenAPI document", () => {
    const paths = OpenApi.fromApi(Api).paths as Record<string, Record<string, unknown>>
    const documented = new Set(
      Object.entries(paths).flatMap(([path, item]) =>
        Object.keys(item).map((method) => `${method.toUpperCase()} ${path.replace(/\{[^}]*\}/g, "{}")}`)
      )
    )
    const named = namedRoutes(readme)
    expect(named.length).toBeGreaterThan(15)
    expect(named.filter((route) => !documented.has(route))).toEqual([])
  })

  it("reads a route however the README writes it", () => {
    expect(namedRoutes("see `POST /api/x/{id}/run`, GET|DELETE /v1/y.\nand PATCH or PUT\n  /api/z/{model_id}: done"))
      .toEqual(["POST /api/x/{}/run", "GET /v1/y", "DELETE /v1/y", "PATCH /api/z/{}", "PUT /api/z/{}"])
  })
})
