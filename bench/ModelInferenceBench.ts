import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { benchSession, type Podium, type ScenarioResult, startBenchPodium } from "./Benchmark.ts"
import { directTarget, json, preciseCount, type SelfRunningBenchmark, settle, startUpstream, time } from "./InferenceBench.ts"

const sqlAt = <A>(databaseUrl: string, run: (sql: PgClient.PgClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    PgClient.makeClient({ url: Redacted.make(databaseUrl) }).pipe(
      Effect.flatMap(run),
      Effect.scoped,
      Effect.provide(Reactivity.layer)
    ) as Effect.Effect<A>
  )

/**
 * A model with one deployed `openai` version whose provider is the loopback upstream (the version
 * is stored as a fine-tune would store it: a succeeded run and an active version), its webhook on
 * and pointing at a loopback receiver, and an API token that may call it.
 */
/** A loopback webhook receiver answering 204, counting what it received. */
export const startHookReceiver = async () => {
  let delivered = 0
  const receiver = createServer((request, response) => {
    request.resume()
    request.on("end", () => {
      delivered++
      response.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
    delivered: () => delivered,
    close: () => new Promise<void>((resolve) => receiver.close(() => resolve()))
  }
}

export const prepare = async (podium: Podium, databaseUrl: string, receiverUrl: string | null) => {
  const jwt = await benchSession(`bench-model-inference-${receiverUrl === null ? "logs" : "webhook"}`)
  const { secret } = await json(podium, "POST", "/api/tokens", jwt, { name: "bench", scopes: ["models:inference"] }, 201)
  const model = (await json(podium, "POST", "/api/models", jwt, { name: "bench model" }, 201)).model
  const runId = crypto.randomUUID()
  const versionId = crypto.randomUUID()
  const base = { id: crypto.randomUUID(), name: "m", trainer: "openai", provider: "fine_tuning_api", model_name: "m" }
  await sqlAt(databaseUrl, (sql) =>
    Effect.gen(function*() {
      yield* sql`
        INSERT INTO fine_tune_runs (id, model_id, workspace_id, status, trigger, trainer, base_model, options, events,
          artifact, version_id, created_at, started_at, finished_at)
        VALUES (${runId}, ${model.id}, ${model.business_id}, 'succeeded', 'manual', 'openai', ${sql.json(base)},
          ${sql.json({ dataset_size: {}, create_synthetic_data: false, hypertuning_enabled: false })}, '[]',
          ${sql.json({ kind: "openai", model: "m" })}, ${versionId}, now(), now(), now())`
      yield* sql`
        INSERT INTO model_versions (id, model_id, fine_tune_run_id, trainer, base_model, metrics, artifact,
          deployment_status, deployment, deployed_at, created_at, completed_at)
        VALUES (${versionId}, ${model.id}, ${runId}, 'openai', ${sql.json(base)}, '{}', ${sql.json({ kind: "openai", model: "m" })},
          'active', ${sql.json({ max_workers: 100, active_workers: 0, default_max_new_tokens: 16, idle_timeout: 300 })}, now(), now(), now())`
    }))
  if (receiverUrl !== null) {
    await json(podium, "PATCH", `/api/models/${model.id}/inference/webhook`, jwt, { webhook_url: receiverUrl }, 200)
  }
  return {
    name: `Podium POST /v1/models/{id}/inference (${receiverUrl === null ? "logs" : "logs + webhook"})`,
    target: {
      method: "POST" as const,
      path: `/v1/models/${model.id}/inference`,
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] })
    }
  }
}

export const counts = (databaseUrl: string) =>
  sqlAt(databaseUrl, (sql) =>
    Effect.map(
      sql<{ logs: string; pending: string }>`
        SELECT (SELECT count(*) FROM model_inference_logs)::text AS logs, (SELECT count(*) FROM webhook_outbox)::text AS pending`,
      (rows) => ({ logs: Number(rows[0]!.logs), pending: Number(rows[0]!.pending) })
    ))

export const ModelInferenceBench: SelfRunningBenchmark = {
  name: "model-inference",
  description: "POST /v1/models/{id}/inference (a deployed provider-hosted version, logs and webhook on) against the same loopback upstream directly",
  scenarios: async () => {
    throw new Error("the model-inference benchmark runs itself (ModelInferenceBench.run)")
  },
  run: async (databases, settings) => {
    const upstream = await startUpstream()
    const receiver = await startHookReceiver()
    const receiverUrl = receiver.url
    try {
      const direct = await time("model-inference / direct upstream", upstream.url, directTarget, settings, undefined, upstream.loop)
      const { succeeded: _d, ...directMeasured } = direct
      const results: Array<ScenarioResult> = [
        { benchmark: "model-inference", scenario: "direct upstream POST /chat/completions", ...directMeasured, callsPerRequest: {} }
      ]
      const d = direct.precise
      const notes = [
        `model-inference: one connection, ${preciseCount} requests one at a time, timed to the microsecond`,
        `  direct upstream: p50 ${d.p50Us} us, p90 ${d.p90Us} us, p99 ${d.p99Us} us, mean ${d.meanUs} us`
      ]
      const added: Array<string> = []
      // logs alone, then logs with the webhook on: each on its own server and database
      for (const hook of [null, receiverUrl]) {
        const databaseUrl = await databases.create()
        const podium = await startBenchPodium(databaseUrl, {
          ALLOW_PRIVATE_NETWORK_TARGETS: "true",
          FINE_TUNE_BASE_URL: upstream.url,
          FINE_TUNE_API_KEY: "sk-bench",
          WEBHOOK_POLL_INTERVAL_MS: "100"
        })
        const deliveredBefore = receiver.delivered()
        let timed: Awaited<ReturnType<typeof time>>
        let scenario: Awaited<ReturnType<typeof prepare>>
        try {
          scenario = await prepare(podium, databaseUrl, hook)
          timed = await time(`model-inference / ${scenario.name}`, podium.url, scenario.target, settings, podium)
          // the deliveries catch up with the answers once the load stops
          for (let i = 0; i < 600 && (await counts(databaseUrl)).pending > 0; i++) await settle()
        } finally {
          await podium.stop()
        }
        const stored = await counts(databaseUrl)
        const addedLatency = settings.connections.map((connections, i) => ({
          connections,
          addedP50Ms: timed.runs[i]!.p50Ms - direct.runs[i]!.p50Ms,
          addedMeanMs: timed.runs[i]!.meanMs - direct.runs[i]!.meanMs
        }))
        const { succeeded, ...podiumMeasured } = timed
        results.push({ benchmark: "model-inference", scenario: scenario.name, ...podiumMeasured, callsPerRequest: {}, addedLatency } as ScenarioResult)
        const p = timed.precise
        notes.push(
          `  ${scenario.name}: p50 ${p.p50Us} us, p90 ${p.p90Us} us, p99 ${p.p99Us} us, mean ${p.meanUs} us; ` +
            `added p50 +${p.p50Us - d.p50Us} us, mean +${p.meanUs - d.meanUs} us (target: p50 under 1000 us)`
        )
        added.push(
          `  ${scenario.name}: ` + addedLatency.map(({ addedP50Ms, connections }) => `${connections} conn. p50 +${addedP50Ms} ms`).join(", "),
          `    ${succeeded} 2xx answers seen, ${stored.logs} inference logs stored, ${receiver.delivered() - deliveredBefore} webhook ` +
            `deliveries received, ${stored.pending} still in the outbox`
        )
      }
      notes.push("model-inference: added latency under load (Podium - direct upstream, autocannon, whole ms)", ...added)
      return { results, notes }
    } finally {
      await upstream.close()
      await receiver.close()
    }
  }
}
