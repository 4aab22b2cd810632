import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { LeaderboardStats, type UsageSeries } from "@podium/domain/inference"
import { ModelStats } from "@podium/domain/models"
import { Api } from "../api/Api.ts"
import { CurrentPrincipal } from "../api/Security.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"

const seriesView = ({ points, range }: UsageSeries) => ({
  window: range.window,
  bucket: range.bucket,
  from: range.from,
  to: range.to,
  buckets: points
})

export const StatsHttp = HttpApiBuilder.group(
  Api,
  "stats",
  Effect.fn(function*(handlers) {
    const leaderboards = yield* LeaderboardStats
    const models = yield* ModelStats
    return handlers
      .handle("leaderboard", ({ params, query }) =>
        Effect.gen(function*() {
          const series = yield* leaderboards.series(yield* CurrentPrincipal, params.leaderboard_id, query)
          return { leaderboard_id: params.leaderboard_id, ...seriesView(series) }
        }).pipe(mapDomainErrors))
      .handle("model", ({ params, query }) =>
        Effect.gen(function*() {
          const series = yield* models.series(yield* CurrentPrincipal, params.model_id, query)
          return { model_id: params.model_id, ...seriesView(series) }
        }).pipe(mapDomainErrors))
  })
)
