import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { InferenceLogStats } from "@podium/domain/models"
import { usageSeries } from "../UsageSeries.ts"

/** A model's series from its inference logs' rollups (kept by a trigger on the logs, migration 0031). */
const layer = Layer.effect(
  InferenceLogStats,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return InferenceLogStats.of({
      series: Effect.fn("InferenceLogStats.series")(function*(modelId, range) {
        return yield* usageSeries(sql, { table: "model_usage", key: "model_id" }, modelId, range)
      })
    })
  })
)

export const InferenceLogStatsPg = { layer }
