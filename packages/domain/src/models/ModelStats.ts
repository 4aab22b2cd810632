import { Context, DateTime, Effect, Layer } from "effect"
import type { Principal } from "../access/index.ts"
import { defaultStatsWindow, type StatsAsk, statsRange, type UsageSeries } from "../inference/index.ts"
import type { InvalidInput, ModelId, NotFound } from "../shared/index.ts"
import { InferenceLogStats } from "./InferenceLogStats.ts"
import { Models } from "./Models.ts"

/** A model's dashboard: its inference calls, errors, spend and latency over a window, for those who can see the model. */
export class ModelStats extends Context.Service<ModelStats, {
  /** The window (default 24h) in its bucket size (the window's default when not asked); see `statsRange`. */
  readonly series: (principal: Principal, modelId: ModelId, ask: StatsAsk) => Effect.Effect<UsageSeries, NotFound | InvalidInput>
}>()("@podium/domain/models/ModelStats") {
  static readonly layer = Layer.effect(
    ModelStats,
    Effect.gen(function*() {
      const models = yield* Models
      const stats = yield* InferenceLogStats
      return ModelStats.of({
        series: Effect.fn("ModelStats.series")(function*(principal, modelId, ask) {
          const model = yield* models.visible(principal, modelId)
          const range = yield* Effect.fromResult(statsRange(ask.window ?? defaultStatsWindow, ask.bucket, yield* DateTime.now))
          return { range, points: yield* stats.series(model.id, range) }
        })
      })
    })
  )
}
