import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { Inference, type InferenceRequest } from "@podium/domain/inference"
import { Api } from "../api/Api.ts"
import { CurrentPrincipal } from "../api/Security.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"

const serve = ({ params, payload }: { readonly params: { readonly leaderboard_id: LeaderboardId }; readonly payload: InferenceRequest }) =>
  Effect.gen(function*() {
    const inference = yield* Inference
    const served = yield* inference.infer(yield* CurrentPrincipal, params.leaderboard_id, payload)
    return HttpServerResponse.text(served.body, {
      contentType: "application/json",
      headers: {
        "x-service-trace-id": served.traceId,
        "x-service-leaderboard-model-id": served.candidate.id,
        "x-service-model-source": served.candidate.platform
      }
    })
  }).pipe(mapDomainErrors)

export const InferenceHttp = HttpApiBuilder.group(
  Api,
  "inference",
  Effect.fn(function*(handlers) {
    const inference = yield* Inference
    const handle = (request: Parameters<typeof serve>[0]) => serve(request).pipe(Effect.provideService(Inference, inference))
    return handlers.handle("infer", handle).handle("chatCompletions", handle)
  })
)
