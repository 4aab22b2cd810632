import { Effect } from "effect"
import { Api } from "../api/Api.ts"
import { frontRoute, makeFrontDoor } from "../FrontDoor.ts"
import { modelInference } from "../models/ModelServingHttp.ts"
import { leaderboardInference } from "./InferenceHttp.ts"

/**
 * Leaderboard and model inference at the front door, on every path the Api gives them: each route
 * built from its endpoint's own definition (FrontDoor.ts) and answered by the same core as its
 * router handler. `test/front-door-differential.test.ts` and `test/fast-inference.test.ts` hold
 * both transports to the same answers.
 */
export const makeFastInference = Effect.gen(function*() {
  const leaderboard = yield* leaderboardInference
  const model = yield* modelInference
  const { inference, modelInference: models } = Api.groups
  return yield* makeFrontDoor(Api, [
    frontRoute(inference.endpoints.infer, leaderboard),
    frontRoute(inference.endpoints.chatCompletions, leaderboard),
    frontRoute(models.endpoints.infer, model),
    frontRoute(models.endpoints.inferAlias, model),
    frontRoute(models.endpoints.chatCompletions, model),
    frontRoute(models.endpoints.inferVersion, model),
    frontRoute(models.endpoints.inferVersionAlias, model)
  ])
})
