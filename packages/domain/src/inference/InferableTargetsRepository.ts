import { Context, type DateTime, type Effect } from "effect"
import type { WorkspaceId } from "../shared/index.ts"

/** What a caller can run inference on: a leaderboard (its chosen model answers) or a model (its deployed version). */
export type TargetKind = "leaderboard" | "model"

/** One target a workspace can call, as the OpenAI model list names it (`{kind}/{id}`). */
export interface InferableTarget {
  readonly kind: TargetKind
  readonly id: string
  readonly workspace_id: WorkspaceId
  readonly created_at: DateTime.Utc
}

/**
 * A workspace's inference targets, one read per kind: its leaderboards that are not archived (nor
 * deleted), oldest first, and its models (not deleted) with a version whose deployment is active,
 * oldest first.
 */
export class InferableTargetsRepository extends Context.Service<InferableTargetsRepository, {
  readonly leaderboards: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<InferableTarget>>
  readonly models: (workspaceId: WorkspaceId) => Effect.Effect<ReadonlyArray<InferableTarget>>
}>()("@podium/domain/inference/InferableTargetsRepository") {}
