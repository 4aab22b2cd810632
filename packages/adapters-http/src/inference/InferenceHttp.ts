import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import type { Principal } from "@podium/domain/access"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { Inference, type InferenceRequest } from "@podium/domain/inference"
import { Api } from "../api/Api.ts"
import { handlerOf, type Served } from "../EndpointCore.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"

/**
 * Leaderboard inference's core, for the router and the front door alike (FastInference): the
 * serving candidate's answer as it came, with the headers naming its trace, the candidate and its
 * platform.
 */
export const leaderboardInference = Effect.map(Effect.service(Inference), (inference) =>
  (
    principal: Principal,
    { params, payload }: { readonly params: { readonly leaderboard_id: LeaderboardId }; readonly payload: InferenceRequest }
  ) =>
    mapDomainErrors(Effect.map(inference.infer(principal, params.leaderboard_id, payload), (served): Served => ({
      contentType: "application/json",
      body: served.body,
      headers: {
        "x-service-trace-id": served.traceId,
        "x-service-leaderboard-model-id": served.candidate.id,
        "x-service-model-source": served.candidate.platform
      }
    }))))

export const InferenceHttp = HttpApiBuilder.group(
  Api,
  "inference",
  Effect.fn(function*(handlers) {
    const handle = handlerOf(yield* leaderboardInference)
    return handlers.handle("infer", handle).handle("chatCompletions", handle)
  })
)
