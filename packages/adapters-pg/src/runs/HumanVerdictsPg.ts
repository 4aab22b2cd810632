import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { HumanVerdicts, type VerdictPair } from "@podium/domain/runs"

/** Pairs by equal input and equal answer text, over the run's workspace's confirmed human cases. */
const layer = Layer.effect(
  HumanVerdicts,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return HumanVerdicts.of({
      pairs: (runId) =>
        sql<VerdictPair>`
          SELECT c.verdict AS judge, hr.verdict AS human
          FROM runs r
          JOIN run_rows rr ON rr.run_id = r.id
          JOIN run_cells c ON c.run_id = r.id AND c.row_idx = rr.idx
          JOIN human_cases hc ON hc.workspace_id = r.workspace_id AND hc.review_state = 'confirmed' AND hc.input = rr.input
          JOIN human_responses hr ON hr.case_id = hc.id AND hr.output = c.output
          WHERE r.id = ${runId} AND c.verdict IS NOT NULL AND hr.verdict IN ('correct', 'incorrect')`.pipe(Effect.orDie)
    })
  })
)

export const HumanVerdictsPg = { layer }
