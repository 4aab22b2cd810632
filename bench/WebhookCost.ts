import { type Settings, startBenchPodium } from "./Benchmark.ts"
import type { Databases } from "./Databases.ts"
import { type Figure, times } from "./Figures.ts"
import { settle } from "./InferenceBench.ts"
import { expectSuccess, hammer, mainLoop } from "./Load.ts"
import { counts, prepare, startHookReceiver } from "./ModelInferenceBench.ts"

/** Podium's event-loop time per call at one connection, over the run and until its logs and deliveries caught up. */
interface CallCost {
  readonly requests: number
  /** µs per call, the window ending once nothing is pending. */
  readonly usPerCall: number
  /** µs per call during the run alone (what the model-inference table shows as loop µs/req). */
  readonly usPerCallDuringRun: number
  readonly logs: number
  readonly delivered: number
}

/** Waits until no delivery is pending and the stored logs stopped changing (at most a minute). */
const caughtUp = async (databaseUrl: string) => {
  let last = await counts(databaseUrl)
  for (let i = 0; i < 240; i++) {
    await settle()
    const now = await counts(databaseUrl)
    if (now.pending === 0 && now.logs === last.logs) return now
    last = now
  }
  throw new Error(`model inference: ${last.pending} webhook deliveries still pending after a minute`)
}

/**
 * Issue 30's webhook figure: model inference at one connection with logs alone, then with logs and
 * the webhook on (each on its own server and database, against `upstreamUrl`), as Podium's
 * event-loop time per call. The window runs from the start of the load to the moment the logs and
 * deliveries caught up, so work deferred past the answer (batched, signed deliveries) is counted.
 */
export const webhookCost = async (databases: Databases, settings: Settings, upstreamUrl: string) => {
  const receiver = await startHookReceiver()
  const receiverUrl = receiver.url
  const measure = async (hook: string | null): Promise<CallCost> => {
    const databaseUrl = await databases.create()
    const podium = await startBenchPodium(databaseUrl, {
      ALLOW_PRIVATE_NETWORK_TARGETS: "true",
      FINE_TUNE_BASE_URL: upstreamUrl,
      FINE_TUNE_API_KEY: "sk-bench",
      WEBHOOK_POLL_INTERVAL_MS: "100"
    })
    try {
      const scenario = await prepare(podium, databaseUrl, hook)
      await expectSuccess(podium.url, scenario.target)
      await hammer(podium.url, scenario.target, 1, settings.warmupSeconds)
      const before = await caughtUp(databaseUrl)
      const deliveredBefore = receiver.delivered()
      process.stderr.write(`  inference / ${scenario.name}: 1 connection for ${settings.seconds} s, then until caught up\n`)
      const activeBefore = await mainLoop()
      const run = await hammer(podium.url, scenario.target, 1, settings.seconds)
      const after = await caughtUp(databaseUrl)
      const active = (await mainLoop()) - activeBefore
      return {
        requests: run.requests,
        usPerCall: (active * 1000) / run.requests,
        usPerCallDuringRun: run.loopUsPerRequest ?? 0,
        logs: after.logs - before.logs,
        delivered: receiver.delivered() - deliveredBefore
      }
    } finally {
      await podium.stop()
    }
  }
  try {
    const logs = await measure(null)
    const webhook = await measure(receiverUrl)
    const figure: Figure = {
      name: "model inference CPU per call, webhook on, 1 connection",
      podium: `${webhook.usPerCall.toFixed(0)} us`,
      reference: `logs alone ${logs.usPerCall.toFixed(0)} us`,
      comparison: times(webhook.usPerCall, logs.usPerCall),
      target: "<= 1.5x",
      met: webhook.usPerCall <= 1.5 * logs.usPerCall,
      how: `event-loop time per call over ${settings.seconds} s and until logs and deliveries caught up; ` +
        `during the run alone ${webhook.usPerCallDuringRun.toFixed(0)} vs ${logs.usPerCallDuringRun.toFixed(0)} us; ` +
        `${webhook.requests} calls, ${webhook.logs} logs, ${webhook.delivered} deliveries received`
    }
    return { logs, webhook, figure }
  } finally {
    await receiver.close()
  }
}
