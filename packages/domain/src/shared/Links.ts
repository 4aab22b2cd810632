import { Context } from "effect"
import type { Invite } from "../access/index.ts"

/** Public links the service hands out (built from the configured public base URL). */
export class Links extends Context.Service<Links, {
  readonly inviteAcceptUrl: (invite: Invite) => string
  /** The JSONL export of a leaderboard's traces. */
  readonly tracesUrl: (leaderboardId: string) => string
  /** Where a leaderboard's dataset rows are pushed. */
  readonly datasetPushUrl: (leaderboardId: string) => string
  /** Exact-version inference of a model (answers only while that version's deployment is active). */
  readonly modelVersionInferenceUrl: (modelId: string, versionId: string) => string
}>()("@podium/domain/shared/Links") {}
