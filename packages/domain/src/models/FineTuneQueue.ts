import { Context, type Effect } from "effect"
import type { FineTuneRun } from "./FineTuneRun.ts"

/** Runs a fine-tune durably: enqueued before `start` answers, resumed after a restart. */
export class FineTuneQueue extends Context.Service<FineTuneQueue, {
  readonly enqueue: (run: FineTuneRun) => Effect.Effect<void>
}>()("@podium/domain/models/FineTuneQueue") {}
