import { Context, DateTime, type Effect, Schema } from "effect"
import type { Principal } from "../access/index.ts"
import { FineTuneRunId, ModelId, ModelVersionId, TokenId, UserId, WorkspaceId } from "../shared/index.ts"

export const DeploymentEntryId = Schema.String.check(Schema.isUUID()).pipe(Schema.brand("DeploymentEntryId"))
export type DeploymentEntryId = typeof DeploymentEntryId.Type

/**
 * `deploy`: a client deployed a version; `rollback`: a client deployed a version created before the
 * one active then; `stop`: a client stopped the active version; `gate`: a fine-tune's gate decided
 * (to deploy its version, or to keep the deployed one).
 */
export const DeploymentEntryKind = Schema.Literals(["deploy", "stop", "gate", "rollback"])
export type DeploymentEntryKind = typeof DeploymentEntryKind.Type

/** Who made a change: a signed-in user, an API token, or the service itself (a fine-tune's gate names its run). */
export const DeploymentActor = Schema.Union([
  Schema.Struct({ type: Schema.Literal("user"), id: UserId }),
  Schema.Struct({ type: Schema.Literal("api_token"), id: TokenId }),
  Schema.Struct({ type: Schema.Literal("system"), id: Schema.String, fine_tune_run_id: Schema.optionalKey(FineTuneRunId) })
])
export type DeploymentActor = typeof DeploymentActor.Type

/** One change of what a model serves: `from` the version active before (if any), `to` the version it concerns after (null: none, or kept). */
export class DeploymentHistoryEntry extends Schema.Class<DeploymentHistoryEntry>("DeploymentHistoryEntry")({
  id: DeploymentEntryId,
  workspace_id: WorkspaceId,
  model_id: ModelId,
  at: Schema.DateTimeUtc,
  kind: DeploymentEntryKind,
  from_version_id: Schema.NullOr(ModelVersionId),
  to_version_id: Schema.NullOr(ModelVersionId),
  actor: DeploymentActor,
  /** What the change rested on (a gate's scores, a deployment's settings): JSON. */
  evidence: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  reason: Schema.NullOr(Schema.String)
}) {}

export interface DeploymentHistoryPage {
  /** Newest first: by `at`, then by id. */
  readonly entries: ReadonlyArray<DeploymentHistoryEntry>
  /** The last entry's id while older entries remain, else null: pass it as the next page's `cursor`. */
  readonly next_cursor: DeploymentEntryId | null
}

/**
 * A model's deployment history: append-only. An entry is never changed or removed (Postgres refuses
 * both; the rows outlive a soft-deleted model and go only with its workspace). A fine-tune run's
 * gate is recorded once: `append` answers false, storing nothing, for a second `gate` entry whose
 * actor names the same run (so a repeated step may append again). Appending an id twice, or for a
 * model never stored, dies as a broken rule of the caller's.
 */
export class DeploymentHistory extends Context.Service<DeploymentHistory, {
  readonly append: (entry: DeploymentHistoryEntry) => Effect.Effect<boolean>
  /**
   * The model's entries, newest first, at most `limit`, after `cursor` (a previous page's
   * `next_cursor`; one that names no entry of this model gives an empty page).
   */
  readonly list: (
    modelId: ModelId,
    page: { readonly limit: number; readonly cursor?: DeploymentEntryId | undefined }
  ) => Effect.Effect<DeploymentHistoryPage>
}>()("@podium/domain/models/DeploymentHistory") {}

/** The principal as the actor of a change. */
export const deploymentActorOf = (principal: Principal): DeploymentActor => {
  switch (principal._tag) {
    case "SessionPrincipal":
      return { type: "user", id: principal.user.id }
    case "ApiTokenPrincipal":
      return { type: "api_token", id: principal.token.id }
    case "PushTokenPrincipal":
      return { type: "system", id: `push_token:${principal.pushTokenId}` }
  }
}

/**
 * A client's deployment of `to`: a `rollback` when it was created before the version active then
 * (the later id breaking a tie), else a `deploy`.
 */
export const deployKindOf = (
  to: { readonly id: string; readonly created_at: DateTime.Utc },
  active: { readonly id: string; readonly created_at: DateTime.Utc } | null
): "deploy" | "rollback" => {
  if (active === null || active.id === to.id) return "deploy"
  const order = DateTime.toEpochMillis(to.created_at) - DateTime.toEpochMillis(active.created_at)
  return order < 0 || (order === 0 && to.id < active.id) ? "rollback" : "deploy"
}
