/**
 * `node bench/SteadyInference.ts`: leaderboard inference at 100 connections for ROUNDS rounds of
 * BENCH_SECONDS each (defaults 6 and 3), one line of req/s and loop µs per request per round. The
 * inference benchmark's 100-connection figure comes 7–10 s after Podium starts, while V8 is still
 * compiling the request path; the later rounds here are the steady state a long-running server
 * lives in. FRONT=0 leaves the route to the HttpApi router. Env: DATABASE_URL as for `npm run bench`.
 * Alternate it between two checkouts to compare them (BENCHMARKS.md, issue 27).
 */
import { Layer, References } from "effect"
import { startPodium } from "../test/support/Podium.ts"
import { benchSession } from "./Benchmark.ts"
import { openDatabases } from "./Databases.ts"
import { json, startUpstream } from "./InferenceBench.ts"
import { hammer, mainLoop, type Target } from "./Load.ts"
import { LogTally } from "./LogTally.ts"

const rounds = Number(process.env["ROUNDS"] ?? 6)
const seconds = Number(process.env["BENCH_SECONDS"] ?? 3)
const front = process.env["FRONT"] !== "0"

const upstream = await startUpstream()
const databases = await openDatabases(process.env["DATABASE_URL"] || undefined)
const logs = new LogTally("server")
const podium = await startPodium({
  LOG_LEVEL: "Warn",
  ALLOW_PRIVATE_NETWORK_TARGETS: "true",
  DATABASE_URL: await databases.create()
}, {
  logging: Layer.mergeAll(logs.layer, Layer.succeed(References.MinimumLogLevel, "Warn")),
  fastInference: front
})
try {
  const bench = { ...podium, logs }
  const jwt = await benchSession("bench-steady-inference")
  const { secret } = await json(bench, "POST", "/api/tokens", jwt, { name: "bench", scopes: ["leaderboards:inference"] }, 201)
  const id = (await json(bench, "POST", "/api/leaderboards", jwt, { name: "bench", dataset_type: "PUSH" }, 201)).leaderboard.id
  const candidate = (await json(bench, "POST", `/api/leaderboards/${id}/models`, jwt, {
    name: "up",
    platform: "Custom",
    url: upstream.url,
    auth_type: "none"
  }, 201)).model.id
  await json(bench, "PATCH", `/api/leaderboards/${id}`, jwt, { chosen_model_strategy: "manual", chosen_leaderboard_model_id: candidate }, 200)
  const target: Target = {
    method: "POST",
    path: `/v1/leaderboard/${id}/inference`,
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({ input: "hi" })
  }
  await hammer(podium.url, target, 10, 2, mainLoop)
  const lines: Array<string> = []
  for (let round = 1; round <= rounds; round++) {
    await new Promise((resolve) => setTimeout(resolve, 300))
    const run = await hammer(podium.url, target, 100, seconds, mainLoop)
    lines.push(`${run.rps.toFixed(0)} req/s (${run.loopUsPerRequest?.toFixed(0) ?? "?"} µs)`)
  }
  console.log(`${front ? "front door" : "router"}, 100 connections, ${seconds} s rounds: ${lines.join(", ")}`)
} finally {
  await podium.stop()
  await upstream.close()
  await databases.close()
}
