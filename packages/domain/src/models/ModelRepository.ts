import { Context, type DateTime, type Effect, type Option } from "effect"
import type { ModelId, WorkspaceId } from "../shared/index.ts"
import type { Model } from "./Model.ts"
import type { AssignmentRejected } from "./ModelErrors.ts"

/**
 * Models of a workspace and the leaderboards assigned to them. Assigning takes the leaderboards'
 * rows in the same transaction that checks they are not running, so an assignment and a run
 * starting cannot both pass (the run's start marks its leaderboard running under the same lock).
 * Deleting is soft: a deleted model is not found again.
 */
export class ModelRepository extends Context.Service<ModelRepository, {
  /** Stores the model with its `leaderboard_ids`; AssignmentRejected (`running`) names a running one. */
  readonly insert: (model: Model) => Effect.Effect<void, AssignmentRejected>
  readonly find: (id: ModelId) => Effect.Effect<Option.Option<Model>>
  /** Oldest first. */
  readonly list: (workspaceId: WorkspaceId, page: { readonly limit: number; readonly offset: number }) => Effect.Effect<ReadonlyArray<Model>>
  /**
   * Writes the model's fields; when `leaderboard_ids` differs from what is stored, the assignment is
   * replaced and the newly assigned leaderboards are checked as at insert. False when it is gone.
   */
  readonly update: (next: Model) => Effect.Effect<boolean, AssignmentRejected>
  readonly softDelete: (id: ModelId, now: DateTime.Utc) => Effect.Effect<boolean>
  /** Models whose next scheduled fine-tune is due. */
  readonly dueSchedules: (now: DateTime.Utc) => Effect.Effect<ReadonlyArray<Model>>
  /** Moves the model's next fine-tune from `from` to `next`, once: false when another instance did. */
  readonly advanceSchedule: (id: ModelId, from: DateTime.Utc, next: DateTime.Utc) => Effect.Effect<boolean>
  /** Models with continuous self-learning on. */
  readonly continuous: Effect.Effect<ReadonlyArray<Model>>
}>()("@podium/domain/models/ModelRepository") {}
