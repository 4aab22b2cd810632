import { Context, Effect } from "effect"
import type { WorkspaceId } from "../shared/index.ts"

/**
 * Which models a workspace has (the models context answers): a Service candidate names one of its
 * leaderboard's workspace. A deleted model, or another workspace's, does not exist for it.
 *
 * The default knows no model: a composition without the models context refuses Service candidates
 * rather than failing to start.
 */
export interface ModelDirectory {
  readonly exists: (workspaceId: WorkspaceId, modelId: string) => Effect.Effect<boolean>
}

export const ModelDirectory = Context.Reference<ModelDirectory>("@podium/domain/leaderboards/ModelDirectory", {
  defaultValue: () => ({ exists: () => Effect.succeed(false) })
})
