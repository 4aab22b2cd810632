import { Cron, DateTime, Duration, Effect, Layer } from "effect"
import { ClusterCron } from "effect/cluster"
import { BudgetLedger, InviteRepository } from "@podium/domain/access"
import { DatasetRepository, Datasets } from "@podium/domain/datasets"
import { deliveryBatch, Deployments, FineTuneScheduler, ModelWebhooks } from "@podium/domain/models"
import { RunScheduler } from "@podium/domain/runs"
import { pruneProcessedMessages } from "@podium/adapters-pg/JobStoragePg"
import type { PodiumConfig } from "./Config.ts"

/** How long processed job messages are kept for deduplication before they are pruned. */
export const messageRetention = Duration.days(7)

export const expireInvites = Effect.gen(function*() {
  const invites = yield* InviteRepository
  const expired = yield* invites.expireOverdue(yield* DateTime.now)
  if (expired > 0) yield* Effect.logInfo("expired invites").pipe(Effect.annotateLogs({ count: expired }))
  return expired
}).pipe(Effect.withSpan("Jobs.expireInvites"))

export const pruneJobMessages = Effect.gen(function*() {
  const before = DateTime.subtractDuration(yield* DateTime.now, messageRetention)
  const pruned = yield* pruneProcessedMessages(before).pipe(Effect.orDie)
  if (pruned > 0) yield* Effect.logInfo("pruned job messages").pipe(Effect.annotateLogs({ count: pruned }))
  return pruned
}).pipe(Effect.withSpan("Jobs.pruneJobMessages"))

/** Releases budget reservations of calls that never settled (their instance died mid-call). */
export const sweepReservations = Effect.gen(function*() {
  const ledger = yield* BudgetLedger
  const released = yield* ledger.sweep(yield* DateTime.now)
  if (released > 0) yield* Effect.logInfo("released budget reservations").pipe(Effect.annotateLogs({ count: released }))
  return released
}).pipe(Effect.withSpan("Jobs.sweepReservations"))

/**
 * Consolidates every PUSH dataset whose trigger has fired (every N events, every H hours), and hashes
 * versions a crash left unhashed. The rows wait in Postgres, so a trigger missed while no instance
 * ran fires at the next tick; one leaderboard's failure is logged and never holds the others.
 */
export const consolidateDatasets = Effect.gen(function*() {
  const repository = yield* DatasetRepository
  const datasets = yield* Datasets
  const each = <A>(label: string, leaderboardId: string, effect: Effect.Effect<A>) =>
    effect.pipe(
      Effect.catchCause((cause) => Effect.logError(label, cause).pipe(Effect.annotateLogs({ leaderboard_id: leaderboardId })))
    )
  let consolidated = 0
  for (const { leaderboardId } of yield* repository.pending) {
    yield* each("dataset consolidation failed", leaderboardId, Effect.map(datasets.consolidateIfDue(leaderboardId), (made) => {
      if (made._tag === "Some") consolidated++
    }))
  }
  for (const { leaderboardId, version } of yield* repository.unhashed) {
    yield* each("dataset version hashing failed", leaderboardId, repository.hash(leaderboardId, version))
  }
  return consolidated
}).pipe(Effect.withSpan("Jobs.consolidateDatasets"))

/**
 * Leaderboards' run schedules: every due one starts a run (each occurrence claimed once, by one
 * instance). Runs left queued by a crash before their job was enqueued are enqueued again.
 */
export const scheduledRuns = Effect.gen(function*() {
  const runs = yield* RunScheduler
  const requeued = yield* runs.requeue
  if (requeued > 0) yield* Effect.logWarning("enqueued queued runs again").pipe(Effect.annotateLogs({ count: requeued }))
  const started = yield* runs.runSchedules
  if (started > 0) yield* Effect.logInfo("started scheduled runs").pipe(Effect.annotateLogs({ count: started }))
  return started
}).pipe(Effect.withSpan("Jobs.scheduledRuns"))

/**
 * Models' fine-tune schedules and continuous learning: every due model starts a fine-tune (each
 * occurrence claimed once), and fine-tunes left queued by a crash are enqueued again.
 */
export const scheduledFineTunes = Effect.gen(function*() {
  const scheduler = yield* FineTuneScheduler
  const deployments = yield* Deployments
  const requeued = (yield* scheduler.requeue) + (yield* deployments.requeue)
  if (requeued > 0) yield* Effect.logWarning("enqueued queued fine-tunes again").pipe(Effect.annotateLogs({ count: requeued }))
  const started = yield* scheduler.runSchedules
  if (started > 0) yield* Effect.logInfo("started scheduled fine-tunes").pipe(Effect.annotateLogs({ count: started }))
  return started
}).pipe(Effect.withSpan("Jobs.scheduledFineTunes"))

/**
 * Webhook deliveries: every instance works through the durable outbox (each due delivery claimed by
 * one of them at a time), at once again while there is more, else every WEBHOOK_POLL_INTERVAL_MS.
 */
export const layerWebhookDeliveries = (config: Pick<PodiumConfig, "webhookPollIntervalMs">) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const webhooks = yield* ModelWebhooks
    const pass = webhooks.deliverDue.pipe(
      Effect.catchCause((cause) => Effect.as(Effect.logError("webhook deliveries failed", cause), 0))
    )
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(pass, (attempted) =>
      attempted >= deliveryBatch ? Effect.void : Effect.sleep(Duration.millis(config.webhookPollIntervalMs)))))
  }))

/**
 * Durable schedules: one run per tick across every instance, kept in Postgres. The dataset check's
 * schedule is `DATASET_CONSOLIDATION_CRON` and the run schedules' check `RUN_SCHEDULER_CRON` (every
 * minute unless set), the fine-tune schedules' `FINE_TUNE_SCHEDULER_CRON`.
 */
export const layerJobs = (
  config: Pick<PodiumConfig, "datasetConsolidationCron" | "runSchedulerCron" | "fineTuneSchedulerCron">
) => Layer.mergeAll(
  ClusterCron.make({
    name: "scheduled-fine-tunes",
    cron: Cron.parseUnsafe(config.fineTuneSchedulerCron),
    execute: Effect.asVoid(scheduledFineTunes)
  }),
  ClusterCron.make({
    name: "scheduled-runs",
    cron: Cron.parseUnsafe(config.runSchedulerCron),
    execute: Effect.asVoid(scheduledRuns)
  }),
  ClusterCron.make({
    name: "expire-invites",
    cron: Cron.parseUnsafe("*/5 * * * *"),
    execute: Effect.asVoid(expireInvites)
  }),
  ClusterCron.make({
    name: "sweep-budget-reservations",
    cron: Cron.parseUnsafe("* * * * *"),
    execute: Effect.asVoid(sweepReservations)
  }),
  ClusterCron.make({
    name: "consolidate-datasets",
    cron: Cron.parseUnsafe(config.datasetConsolidationCron),
    execute: Effect.asVoid(consolidateDatasets)
  }),
  ClusterCron.make({
    name: "prune-job-messages",
    cron: Cron.parseUnsafe("17 * * * *"),
    execute: Effect.asVoid(pruneJobMessages)
  })
)
