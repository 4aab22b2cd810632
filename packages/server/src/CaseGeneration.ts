import { Effect, Layer, Schema } from "effect"
import { Activity, Workflow } from "effect/workflow"
import { CaseGeneration, CaseGenerator, CaseId } from "@podium/domain/human"
import { LeaderboardId } from "@podium/domain/leaderboards"
import { workflows } from "./Steps.ts"

/**
 * A claimed human-evaluation generation as a durable workflow, keyed by its claim: the slots are
 * read once, each candidate's answer is an activity (all at once), then the case is completed. A
 * restart replays the finished activities from storage and runs the rest; `CaseGenerator.answer`
 * skips a slot whose response is stored, so a succeeded response is never generated again.
 */
export const CaseGenerationWorkflow = Workflow.make("CaseGeneration", {
  payload: { leaderboard_id: LeaderboardId, case_id: CaseId, claim_id: Schema.String },
  idempotencyKey: ({ claim_id }) => claim_id
})

export const layerCaseGenerationWorkflow = CaseGenerationWorkflow.toLayer(Effect.fnUntraced(function*(job) {
  const generator = yield* CaseGenerator
  const slots = yield* Activity.make({
    name: "slots",
    success: Schema.Array(Schema.String),
    execute: generator.slots(job)
  })
  yield* Effect.forEach(
    slots,
    (responseId) => Activity.make({ name: `answer-${responseId}`, execute: generator.answer(job, responseId) }),
    { concurrency: "unbounded", discard: true }
  )
  yield* Activity.make({ name: "finish", execute: generator.finish(job) })
}))

/** Runs the workflow and waits for it; the execution is stored before any candidate is called. */
export const layerCaseGeneration = Layer.effect(
  CaseGeneration,
  Effect.map(workflows, ({ run }) => CaseGeneration.of({ run: (job) => run(CaseGenerationWorkflow, job, "CaseGeneration.run") }))
)
