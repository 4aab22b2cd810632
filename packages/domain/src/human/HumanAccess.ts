import { Context, Effect, Layer, Option } from "effect"
import { type LeaderboardId, LeaderboardRepository, type Serving } from "../leaderboards/index.ts"
import { NotFound } from "../shared/index.ts"
import { type Principal, visibleMembership } from "../access/index.ts"
import { limits } from "./HumanEval.ts"
import { InvalidCandidateCount, WrongEvalType } from "./HumanEvalErrors.ts"
import { basePromptOf, configurationOf } from "./HumanCase.ts"

/** A leaderboard open for human evaluation, with the configuration its new cases are made under. */
export interface HumanLeaderboard {
  readonly serving: Serving
  readonly basePrompt: string
  readonly configuration: string
}

export type HumanAccessError = NotFound | WrongEvalType | InvalidCandidateCount

/**
 * Who may evaluate what (spec part 4): signed-in members of the leaderboard's workspace only, on
 * leaderboards whose eval_type is `human` and that have 2 to 8 candidates (the production
 * candidates, every one of which answers each case). Every human-evaluation use case starts here.
 */
export class HumanAccess extends Context.Service<HumanAccess, {
  readonly open: (principal: Principal, leaderboardId: LeaderboardId) => Effect.Effect<HumanLeaderboard, HumanAccessError>
}>()("@podium/domain/human/HumanAccess") {
  static readonly layer = Layer.effect(
    HumanAccess,
    Effect.gen(function*() {
      const leaderboards = yield* LeaderboardRepository
      return HumanAccess.of({
        open: Effect.fn("HumanAccess.open")(function*(principal: Principal, leaderboardId: LeaderboardId) {
          // from the instance's copy (no round trip): current within milliseconds of a change made anywhere, as inference's
          const found = yield* leaderboards.servingSnapshot(leaderboardId)
          if (Option.isNone(found) || visibleMembership(principal, found.value.leaderboard.workspace_id) === undefined) {
            return yield* new NotFound({ resource: "leaderboard", id: leaderboardId })
          }
          const serving = found.value
          const evalType = serving.leaderboard.challenge.eval_type
          if (evalType !== "human") return yield* new WrongEvalType({ leaderboard_id: leaderboardId, eval_type: evalType })
          const count = serving.candidates.length
          if (count < limits.minCandidates || count > limits.maxCandidates) {
            return yield* new InvalidCandidateCount({ leaderboard_id: leaderboardId, count })
          }
          const basePrompt = basePromptOf(serving.leaderboard.challenge)
          return { serving, basePrompt, configuration: configurationOf(basePrompt, serving.candidates) }
        })
      })
    })
  )
}
