import { Context, type Effect } from "effect"
import type { WorkspaceId } from "../shared/index.ts"

/**
 * Which models a workspace has (the models context answers): a Service candidate names one of its
 * leaderboard's workspace. A deleted model, or another workspace's, does not exist for it.
 *
 * It has no default: a composition must provide it (the models context's `ModelDirectoryModels`),
 * so leaving it out does not compile.
 */
export class ModelDirectory extends Context.Service<ModelDirectory, {
  readonly exists: (workspaceId: WorkspaceId, modelId: string) => Effect.Effect<boolean>
}>()("@podium/domain/leaderboards/ModelDirectory") {}
