import { Context, type Effect } from "effect"
import type { StatsRange, UsagePoint } from "../inference/index.ts"
import type { ModelId } from "../shared/index.ts"

/**
 * A model's inference over time, from its inference logs (every call through the model, whichever
 * version answered): one point per bucket of the range, in order, buckets without calls as zeros.
 * One aggregate read per series, however many calls it covers.
 */
export class InferenceLogStats extends Context.Service<InferenceLogStats, {
  readonly series: (modelId: ModelId, range: StatsRange) => Effect.Effect<ReadonlyArray<UsagePoint>>
}>()("@podium/domain/models/InferenceLogStats") {}
