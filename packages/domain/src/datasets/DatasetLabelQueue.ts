import { Context, type Effect } from "effect"
import type { LabelJob } from "./LabelJob.ts"

/** Runs a job durably: enqueued before `start` answers, resumed after a restart. */
export class DatasetLabelQueue extends Context.Service<DatasetLabelQueue, {
  readonly enqueue: (job: LabelJob) => Effect.Effect<void>
}>()("@podium/domain/datasets/DatasetLabelQueue") {}
