import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { HumanVerdicts, type VerdictPair } from "@podium/domain/runs"

/**
 * Pairs by equal input and equal answer text, over the run's workspace's confirmed human cases.
 * Each judged cell pairs with one human verdict at most, however many confirmed cases (in one
 * human leaderboard or several) judged the same input and answer: the one whose case was first
 * confirmed (its earliest confirmed review save), ties and cases without a saved history broken
 * by case id and then response id, so the choice does not depend on row order.
 */
const layer = Layer.effect(
  HumanVerdicts,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return HumanVerdicts.of({
      pairs: (runId) =>
        sql<VerdictPair>`
          SELECT DISTINCT ON (c.row_idx, c.candidate_id) c.verdict AS judge, hr.verdict AS human
          FROM runs r
          JOIN run_rows rr ON rr.run_id = r.id
          JOIN run_cells c ON c.run_id = r.id AND c.row_idx = rr.idx
          JOIN human_cases hc ON hc.workspace_id = r.workspace_id AND hc.review_state = 'confirmed' AND hc.input = rr.input
          JOIN human_responses hr ON hr.workspace_id = hc.workspace_id AND hr.case_id = hc.id AND hr.output = c.output
          CROSS JOIN LATERAL (
            SELECT min(h.saved_at) AS at FROM human_review_history h
            WHERE h.workspace_id = hc.workspace_id AND h.case_id = hc.id AND h.confirmed
          ) confirmed
          WHERE r.id = ${runId} AND c.verdict IS NOT NULL AND hr.verdict IN ('correct', 'incorrect')
          ORDER BY c.row_idx, c.candidate_id, confirmed.at NULLS LAST, hc.id, hr.id`.pipe(Effect.orDie)
    })
  })
)

export const HumanVerdictsPg = { layer }
