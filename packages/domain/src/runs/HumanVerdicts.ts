import { Context, type Effect } from "effect"
import type { Verdict } from "./Agreement.ts"

/** A judged answer a person also judged: the judge's verdict and the person's. */
export interface VerdictPair {
  readonly judge: Verdict
  readonly human: Verdict
}

/**
 * Human verdicts on the answers a run's judge judged, for calibration: a cell pairs with a
 * confirmed human-evaluation response of the same workspace when both answered the same input with
 * the same text (so both judged the same answer); abstentions and cells without a verdict are left out.
 * Each cell pairs with one human verdict at most, the one first confirmed, so that an answer people
 * confirmed in several human leaderboards counts once.
 */
export class HumanVerdicts extends Context.Service<HumanVerdicts, {
  readonly pairs: (runId: string) => Effect.Effect<ReadonlyArray<VerdictPair>>
}>()("@podium/domain/runs/HumanVerdicts") {}
