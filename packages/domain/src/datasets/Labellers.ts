import { Context, Effect, Layer, Option } from "effect"
import {
  type ChatCompletion,
  ChatProvider,
  type ChatProviderFailed,
  type ChatRequest,
  ChatTargets,
  isCallable,
  ServiceModels,
  servingCandidate
} from "../inference/index.ts"
import { type Leaderboard, type LeaderboardId, LeaderboardRepository } from "../leaderboards/index.ts"
import { type Labeller, labellerOf } from "./LabelJob.ts"

/** A leaderboard's labeller, ready to be asked. */
export interface ReadyLabeller {
  readonly labeller: Labeller
  readonly leaderboard: Leaderboard
  /** One call, not retried: the caller decides what a failure is worth. */
  readonly ask: (request: ChatRequest) => Effect.Effect<ChatCompletion, ChatProviderFailed>
}

/**
 * Who labels a leaderboard's rows, for auto-labels and improve-dataset alike: its judge model
 * (through the workspace's integration), else its serving candidate of any platform — a Service
 * candidate answers through its model's deployed version, as it does for inference and runs.
 * None when the leaderboard is gone or has neither.
 */
export class Labellers extends Context.Service<Labellers, {
  readonly of: (leaderboardId: LeaderboardId) => Effect.Effect<Option.Option<ReadyLabeller>>
}>()("@podium/domain/datasets/Labellers") {
  static readonly layer = Layer.effect(
    Labellers,
    Effect.gen(function*() {
      const repository = yield* LeaderboardRepository
      const targets = yield* ChatTargets
      const provider = yield* ChatProvider
      const serviceModels = yield* ServiceModels

      const of = Effect.fn("Labellers.of")(function*(leaderboardId: LeaderboardId) {
        const serving = yield* repository.findServing(leaderboardId)
        if (Option.isNone(serving)) return Option.none<ReadyLabeller>()
        const { candidates, credentials, leaderboard, ranking_winner } = serving.value
        const found = labellerOf(leaderboard, servingCandidate(leaderboard, candidates, ranking_winner))
        if (Option.isNone(found)) return Option.none<ReadyLabeller>()
        const labeller = found.value
        const workspaceId = leaderboard.workspace_id
        let ask: ReadyLabeller["ask"]
        if (labeller._tag === "Judge") {
          const target = yield* targets.judge(labeller.provider, labeller.model, workspaceId)
          ask = (request) => provider.complete(target, request)
        } else if (isCallable(labeller.candidate)) {
          const target = yield* targets.of(labeller.candidate, workspaceId, credentials)
          ask = (request) => provider.complete(target, request)
        } else {
          const modelId = labeller.candidate.model_id ?? ""
          ask = (request) => serviceModels.complete(workspaceId, modelId, request)
        }
        return Option.some<ReadyLabeller>({ labeller, leaderboard, ask })
      })

      return Labellers.of({ of })
    })
  )
}
