/**
 * `podium eval`, the client for CI, as a child process against a running test Podium whose
 * candidates are loopback fakes: its exit codes, its text and JSON output, and its one-line errors.
 */
import { spawn } from "node:child_process"
import { join, resolve } from "node:path"
import { tmpdir } from "node:os"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ModelFake, startModelFake } from "./fakes/ModelFake.ts"
import { aCandidate, aLeaderboard, apiToken, type SignedIn, signedIn } from "./support/Builders.ts"
import { type Podium, startPodium } from "./support/Podium.ts"

const root = resolve(import.meta.dirname, "..")
const nodeBin = join(root, "node_modules", ".bin", "node")
const binTs = join("packages", "server", "src", "bin.ts")

interface Finished {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** `podium eval ...` with only PATH, HOME and `env`: nothing of the test run's environment leaks in. */
const podiumEval = (args: ReadonlyArray<string>, env: Record<string, string>, timeoutMs = 90_000): Promise<Finished> =>
  new Promise((resolve, reject) => {
    const child = spawn(nodeBin, [binTs, "eval", ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? tmpdir(), NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`podium eval ${args.join(" ")} timed out\n--- stdout\n${stdout}\n--- stderr\n${stderr}`))
    }, timeoutMs)
    child.once("error", reject)
    child.once("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

let fake: ModelFake
let podium: Podium
let owner: SignedIn
let token: string
let env: Record<string, string>

const rows = 60
const rowOf = (question: string) => Number(question.replace(/^q/, ""))

beforeAll(async () => {
  fake = await startModelFake()
  // the serving one is right on every row; `worse` is wrong on rows 1 … 30 (30 rows lost, none won);
  // `close` is wrong on rows 1 and 2 only (2 lost, none won)
  fake.models["incumbent"] = (q) => `ref-${q}`
  fake.models["worse"] = (q) => rowOf(q) <= 30 ? "no idea" : `ref-${q}`
  fake.models["close"] = (q) => rowOf(q) <= 2 ? "no idea" : `ref-${q}`
  fake.files["/rows.jsonl"] = {
    contentType: "application/jsonl",
    body: Array.from({ length: rows }, (_, i) => JSON.stringify({ input: `q${i + 1}`, expected: `ref-q${i + 1}` })).join("\n")
  }
  podium = await startPodium({ RUN_CONCURRENCY: "8" })
  owner = await signedIn(podium, "cli-eval-owner")
  token = await apiToken(owner.api, ["leaderboards:read", "leaderboards:run"])
  env = { PODIUM_URL: podium.url, PODIUM_API_TOKEN: token }
}, 60_000)
afterAll(async () => {
  await podium?.stop()
  await fake?.close()
})

/** A leaderboard of the incumbent and `challenger` where the incumbent serves (a first run asked only it). */
const servingIncumbent = async (challenger: string) => {
  const { id } = (await owner.api((c) =>
    c.leaderboards.create({
      payload: aLeaderboard({ name: `eval ${challenger}`, dataset_type: "GET", dataset_url: `${fake.url}/rows.jsonl`, eval_type: "exact" })
    })
  )).leaderboard
  const add = async (model: string) =>
    (await owner.api((c) =>
      c.leaderboards.addModel({ params: { leaderboard_id: id }, payload: aCandidate(`${fake.url}/v1`, { name: model, model_name: model }) })
    )).model.id
  const incumbent = await add("incumbent")
  const other = await add(challenger)
  const { run } = await owner.api((c) => c.runs.start({ params: { leaderboard_id: id }, payload: { model_ids: [incumbent] } }))
  const get = () => owner.api((c) => c.runs.get({ params: { leaderboard_id: id, run_id: run.id } }))
  await expect.poll(async () => (await get()).run.status, { timeout: 60_000, interval: 100 }).toBe("succeeded")
  expect((await get()).run.serving_decision).toMatchObject({ action: "first", to_candidate_id: incumbent })
  return { id, incumbent, challenger: other }
}

describe("podium eval", () => {
  it("its --help names its flags, the environment it reads and its exit codes", async () => {
    const help = await podiumEval(["--help"], {})
    expect(help.code, help.stderr).toBe(0)
    for (const flag of ["--candidate", "--sample-size", "--seed", "--json", "--timeout"]) expect(help.stdout, flag).toContain(flag)
    expect(help.stdout).toContain("PODIUM_URL")
    expect(help.stdout).toContain("PODIUM_API_TOKEN")
    expect(help.stdout).toMatch(/exits 1 when a --candidate is significantly worse/)
  }, 60_000)

  it("exits 1 when a named candidate is significantly worse than the serving one", async () => {
    const { challenger, id, incumbent } = await servingIncumbent("worse")
    const finished = await podiumEval([id, "--candidate", "worse"], env)
    expect(finished.code, finished.stderr).toBe(1)

    // progress: one line per change on a pipe, ending with the run's success
    const progress = finished.stderr.trim().split("\n")
    expect(progress.at(-1)).toMatch(/^run [0-9a-f-]+: succeeded, 120\/120 cells$/)
    // the ranking with intervals, ranks and bands, the serving one marked; the decision; the verdict
    // Wilson 95% of 60/60 and 30/60, by its formula with SciPy's norm.ppf(0.975):
    // (0.93983, 1.0) and (0.37735, 0.62265)
    expect(finished.stdout).toMatch(/1\s+1\s+incumbent \(serving\)\s+1\.000\s+0\.940–1\.000\s+60\/60/)
    expect(finished.stdout).toMatch(/2\s+2\s+worse\s+0\.500\s+0\.377–0\.623\s+30\/60/)
    expect(finished.stdout).toContain("Serving decision: keep, incumbent → incumbent")
    // McNemar exact, 0 won and 30 lost: SciPy binomtest(0, 30, 0.5).pvalue = 1.862645149230957e-09
    expect(finished.stdout).toContain("worse: significantly worse against the serving incumbent: 0 won, 30 lost of 60 shared rows, Holm p < 0.0001, below alpha 0.05")

    // --json: the run view and the verdict, for other tools; the same exit code
    const json = await podiumEval([id, "--candidate", challenger, "--json"], env)
    expect(json.code, json.stderr).toBe(1)
    const parsed = JSON.parse(json.stdout) as {
      run: { id: string; status: string; results: Array<Record<string, unknown>>; pairwise: Array<Record<string, number | string>> }
      verdict: Record<string, unknown>
    }
    expect(parsed.run.status).toBe("succeeded")
    expect(parsed.run.results.map((r) => [r["leaderboard_model_id"], r["rank"], r["correct"], r["total"], r["rank_band"]])).toEqual([
      [incumbent, 1, 60, 60, { best: 1, worst: 1 }],
      [challenger, 2, 30, 60, { best: 2, worst: 2 }]
    ])
    const pair = parsed.run.pairwise[0]!
    expect(Math.abs(Number(pair["p_value"]) - 1.862645149230957e-09) / 1.862645149230957e-09).toBeLessThan(1e-9)
    expect(parsed.verdict).toEqual({
      alpha: 0.05,
      serving_candidate_id: incumbent,
      candidates: [expect.objectContaining({
        candidate_id: challenger,
        name: "worse",
        serving_candidate_id: incumbent,
        wins: 0,
        losses: 30,
        shared_rows: 60,
        p_adjusted: pair["p_adjusted"],
        significantly_worse: true
      })],
      exit_code: 1
    })
  }, 180_000)

  it("exits 0 when a named candidate is not significantly worse, and a sample is asked as given", async () => {
    const { challenger, id, incumbent } = await servingIncumbent("close")
    const finished = await podiumEval([id, "--candidate", "close", "--json", "--sample-size", "60", "--seed", "7"], env)
    expect(finished.code, finished.stderr).toBe(0)
    const parsed = JSON.parse(finished.stdout) as {
      run: { sample: unknown; results: Array<Record<string, unknown>> }
      verdict: { candidates: Array<Record<string, unknown>>; exit_code: number }
    }
    expect(parsed.run.sample).toEqual({ size: 60, seed: 7 })
    expect(parsed.run.results.map((r) => [r["leaderboard_model_id"], r["correct"], r["statistically_tied_with"]])).toEqual([
      [incumbent, 60, [challenger]],
      [challenger, 58, [incumbent]]
    ])
    // 0 won, 2 lost: SciPy binomtest(0, 2, 0.5).pvalue = 0.5
    expect(parsed.verdict.candidates).toEqual([
      expect.objectContaining({
        candidate_id: challenger,
        wins: 0,
        losses: 2,
        p_adjusted: 0.5,
        significantly_worse: false,
        note: "not significantly worse against the serving incumbent: 0 won, 2 lost of 60 shared rows, Holm p = 0.5, not below alpha 0.05"
      })
    ])
    expect(parsed.verdict.exit_code).toBe(0)

    // the serving candidate itself is never worse than itself; without --candidate nothing is judged
    const itself = await podiumEval([id, "--candidate", incumbent], env)
    expect(itself.code, itself.stderr).toBe(0)
    expect(itself.stdout).toContain("incumbent: it is the serving candidate")
  }, 180_000)

  it("refuses with one clear line and exit 2: no token, no URL, a refused token, an unknown leaderboard or candidate", async () => {
    const id = "0190f5e4-0000-7000-8000-000000000000"
    const noToken = await podiumEval([id], { PODIUM_URL: podium.url })
    expect(noToken.code).toBe(2)
    expect(noToken.stderr.trim()).toBe(
      "podium eval: PODIUM_API_TOKEN is not set: set it to an API token (pod_…) with the leaderboards:read and leaderboards:run scopes"
    )
    const noUrl = await podiumEval([id], { PODIUM_API_TOKEN: token })
    expect(noUrl.code).toBe(2)
    expect(noUrl.stderr.trim()).toMatch(/^podium eval: PODIUM_URL is not set/)

    const refused = await podiumEval([id], { PODIUM_URL: podium.url, PODIUM_API_TOKEN: "pod_not-a-real-token" })
    expect(refused.code).toBe(2)
    expect(refused.stderr.trim()).toMatch(/^podium eval: Podium refused PODIUM_API_TOKEN: .*\(401 unauthorized: /)

    const readOnly = await apiToken(owner.api, ["leaderboards:read"])
    const { id: real } = await servingIncumbent("close")
    const scoped = await podiumEval([real], { PODIUM_URL: podium.url, PODIUM_API_TOKEN: readOnly })
    expect(scoped.code).toBe(2)
    expect(scoped.stderr.trim()).toMatch(/^podium eval: PODIUM_API_TOKEN may not do this: .*\(403 insufficient_scope: /)

    const missing = await podiumEval([id], env)
    expect(missing.code).toBe(2)
    expect(missing.stderr.trim()).toMatch(/^podium eval: not found: .*\(404 not_found: /)

    const unknown = await podiumEval([real, "--candidate", "nobody"], env)
    expect(unknown.code).toBe(2)
    expect(unknown.stderr.trim()).toBe(
      "podium eval: --candidate nobody is neither the id nor the name of a candidate of this leaderboard (incumbent, close)"
    )

    const unreachable = await podiumEval([id], { PODIUM_URL: "http://127.0.0.1:9", PODIUM_API_TOKEN: token })
    expect(unreachable.code).toBe(2)
    expect(unreachable.stderr.trim()).toMatch(/^podium eval: cannot reach Podium at http:\/\/127\.0\.0\.1:9: /)

    const usage = await podiumEval([], env)
    expect(usage.code).toBe(2)
    const seedOnly = await podiumEval([real, "--seed", "3"], env)
    expect(seedOnly.code).toBe(2)
    expect(seedOnly.stderr.trim()).toBe("podium eval: --seed needs --sample-size")
  }, 180_000)
})
