import { Context, type Effect } from "effect"
import type { LeaderboardId } from "../leaderboards/index.ts"
import type { CaseId } from "./HumanEval.ts"

/** A claimed generation: the claim id names it, so running it twice runs it once. */
export interface GenerationJob {
  readonly leaderboard_id: LeaderboardId
  readonly case_id: CaseId
  readonly claim_id: string
}

/**
 * Runs a claimed generation durably (CaseGenerator does the work, one slot at a time): `run`
 * returns once the case is generated. If the process dies first, a restart or another instance
 * finishes it, without calling again a candidate whose response was stored.
 */
export class CaseGeneration extends Context.Service<CaseGeneration, {
  readonly run: (job: GenerationJob) => Effect.Effect<void>
}>()("@podium/domain/human/CaseGeneration") {}
