import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import type { Principal } from "@podium/domain/access"
import type { LeaderboardId } from "@podium/domain/leaderboards"
import { Inference, type InferenceRequest } from "@podium/domain/inference"
import { Api } from "../api/Api.ts"
import { errorAsLastEvent, eventStreamHeaders, eventStreamType, handlerOf, type Served } from "../EndpointCore.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"

/**
 * Leaderboard inference's core, for the router and the front door alike (FastInference): the
 * serving candidate's answer as it came (JSON, or with `stream: true` its server-sent events, an
 * upstream failing mid-stream as the last event), with the headers naming its trace, the candidate
 * and its platform.
 */
export const leaderboardInference = Effect.map(Effect.service(Inference), (inference) =>
  (
    principal: Principal,
    { params, payload }: { readonly params: { readonly leaderboard_id: LeaderboardId }; readonly payload: InferenceRequest }
  ) =>
    mapDomainErrors(Effect.map(inference.infer(principal, params.leaderboard_id, payload), (served): Served => {
      const headers = {
        "x-service-trace-id": served.traceId,
        "x-service-leaderboard-model-id": served.candidate.id,
        "x-service-model-source": served.candidate.platform
      }
      return served.events === undefined
        ? { contentType: "application/json", body: served.body, headers }
        : {
          contentType: eventStreamType,
          body: errorAsLastEvent(served.events, (e) => mapDomainErrors(Effect.fail(e))),
          headers: { ...headers, ...eventStreamHeaders }
        }
    })))

export const InferenceHttp = HttpApiBuilder.group(
  Api,
  "inference",
  Effect.fn(function*(handlers) {
    const handle = handlerOf(yield* leaderboardInference)
    return handlers.handle("infer", handle).handle("chatCompletions", handle)
  })
)
