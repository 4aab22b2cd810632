import { Context, type Effect } from "effect"
import type { Run } from "./Run.ts"

/** Runs a run durably: enqueued before `start` answers, resumed after a restart. */
export class RunQueue extends Context.Service<RunQueue, {
  readonly enqueue: (run: Run) => Effect.Effect<void>
}>()("@podium/domain/runs/RunQueue") {}
