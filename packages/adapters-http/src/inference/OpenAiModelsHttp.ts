import { DateTime, Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { type InferableTarget, InferableTargets, type TargetKind } from "@podium/domain/inference"
import { Api } from "../api/Api.ts"
import { CurrentPrincipal } from "../api/Security.ts"
import { mapDomainErrors } from "../handlers/ErrorMapping.ts"

/** A target as OpenAI's model object; `owned_by` is the owning workspace's id. */
const openAiModelOf = (target: InferableTarget) => ({
  id: `${target.kind}/${target.id}`,
  object: "model" as const,
  created: Math.floor(DateTime.toEpochMillis(target.created_at) / 1000),
  owned_by: target.workspace_id
})

export const OpenAiModelsHttp = HttpApiBuilder.group(
  Api,
  "openAiModels",
  Effect.fn(function*(handlers) {
    const targets = yield* InferableTargets
    const retrieve = (kind: TargetKind, id: string) =>
      Effect.gen(function*() {
        return openAiModelOf(yield* targets.get(yield* CurrentPrincipal, kind, id))
      }).pipe(mapDomainErrors)
    return handlers
      .handle("list", () =>
        Effect.gen(function*() {
          const list = yield* targets.list(yield* CurrentPrincipal)
          return { object: "list" as const, data: list.map(openAiModelOf) }
        }).pipe(mapDomainErrors))
      .handle("retrieveLeaderboard", ({ params }) => retrieve("leaderboard", params.leaderboard_id))
      .handle("retrieveModel", ({ params }) => retrieve("model", params.model_id))
      .handle("retrieve", ({ params }) => {
        const slash = params.target.indexOf("/")
        const kind: TargetKind = params.target.slice(0, slash) === "leaderboard" ? "leaderboard" : "model"
        return retrieve(kind, params.target.slice(slash + 1))
      })
  })
)
