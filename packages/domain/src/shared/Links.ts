import { Context } from "effect"
import type { InviteId, WorkspaceId } from "./Ids.ts"

/** What an invite's accept link is built from (any invite has it). */
export interface InviteLink {
  readonly id: InviteId
  readonly workspace_id: WorkspaceId
  readonly redirect_to: string | null
}

/** Public links the service hands out (built from the configured public base URL). */
export class Links extends Context.Service<Links, {
  readonly inviteAcceptUrl: (invite: InviteLink) => string
  /** The JSONL export of a leaderboard's traces. */
  readonly tracesUrl: (leaderboardId: string) => string
  /** Where a leaderboard's dataset rows are pushed. */
  readonly datasetPushUrl: (leaderboardId: string) => string
  /** Exact-version inference of a model (answers only while that version's deployment is active). */
  readonly modelVersionInferenceUrl: (modelId: string, versionId: string) => string
}>()("@podium/domain/shared/Links") {}
