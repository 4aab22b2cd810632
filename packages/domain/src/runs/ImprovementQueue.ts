import { Context, type Effect } from "effect"
import type { Improvement } from "./Improvement.ts"

/** Runs an improve-dataset job durably. */
export class ImprovementQueue extends Context.Service<ImprovementQueue, {
  readonly enqueue: (job: Improvement) => Effect.Effect<void>
}>()("@podium/domain/runs/ImprovementQueue") {}
