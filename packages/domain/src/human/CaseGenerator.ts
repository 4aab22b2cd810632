import { Context, DateTime, Effect, Layer, Option, Result } from "effect"
import { generationMessages, type HumanCase } from "./HumanCase.ts"
import type { CaseResponse, Slot } from "./CaseStage.ts"
import { complete } from "./CaseLifecycle.ts"
import { LeaderboardRepository } from "../leaderboards/index.ts"
import { CandidateCalls } from "../inference/index.ts"
import type { GenerationJob } from "./CaseGeneration.ts"
import { HumanCaseRepository } from "./HumanCaseRepository.ts"
import { HumanDocumentRepository } from "./HumanDocumentRepository.ts"

/** The failure stored when the database refuses a generated answer. */
const notStored = "the answer could not be stored"

/**
 * The steps of a claimed generation, each safe to repeat (durable execution runs them at least
 * once): `slots` lists what to answer, `answer` calls one candidate unless its response is stored,
 * `finish` completes the case once every slot has its response.
 */
export class CaseGenerator extends Context.Service<CaseGenerator, {
  /** The response ids of the claim's slots; empty when the claim is no longer the case's. */
  readonly slots: (job: GenerationJob) => Effect.Effect<ReadonlyArray<string>>
  readonly answer: (job: GenerationJob, responseId: string) => Effect.Effect<void>
  readonly finish: (job: GenerationJob) => Effect.Effect<void>
}>()("@podium/domain/human/CaseGenerator") {
  static readonly layer = Layer.effect(
    CaseGenerator,
    Effect.gen(function*() {
      const leaderboards = yield* LeaderboardRepository
      const cases = yield* HumanCaseRepository
      const calls = yield* CandidateCalls
      const documents = yield* HumanDocumentRepository

      /** The case while this job's claim holds it. */
      const claimed = Effect.fnUntraced(function*(job: GenerationJob) {
        const found = yield* cases.find(job.leaderboard_id, job.case_id)
        return Option.filter(found, (c): c is HumanCase => c.stage._tag === "Generating" && c.stage.claim_id === job.claim_id)
      })

      const call = Effect.fnUntraced(function*(c: HumanCase, slot: Slot) {
        const serving = yield* leaderboards.findServing(c.leaderboard_id)
        const candidate = Option.flatMapNullishOr(serving, (s) => s.candidates.find((x) => x.id === slot.candidate_id))
        const messages = generationMessages(c, yield* documents.texts(c.workspace_id, c.attachments.map((a) => a.id)))
        const started = yield* DateTime.now
        // priced and called as every call of a candidate is (CandidateCalls): a Service candidate is
        // answered by its model's deployed version, failing like any candidate when it cannot
        const result = Option.isNone(serving) || Option.isNone(candidate)
          ? Result.fail({ reason: "the candidate was removed", latency_ms: 0 })
          : yield* Effect.result(Effect.flatMap(
            calls.candidate(candidate.value, c.workspace_id, serving.value.credentials),
            ({ send }) => send({ messages })
          ))
        // `manual`: a call a person asked for (a human-evaluation case), not production traffic
        const traceId = yield* calls.trace({
          workspace_id: c.workspace_id,
          leaderboard_id: c.leaderboard_id,
          leaderboard_model_id: slot.candidate_id,
          source: "manual",
          run_id: null,
          input: c.input,
          messages,
          token_id: null,
          created_at: started
        }, result)
        const response: CaseResponse = Result.isSuccess(result)
          ? {
            ...slot,
            status: "succeeded",
            output: result.success.output,
            error: null,
            latency_ms: result.success.latencyMs,
            usage: result.success.usage,
            cost_usd: result.success.costUsd,
            trace_id: traceId,
            created_at: started
          }
          : {
            ...slot,
            status: "failed",
            output: null,
            error: result.failure.reason,
            latency_ms: result.failure.latency_ms,
            usage: null,
            cost_usd: null,
            trace_id: traceId,
            created_at: started
          }
        // an answer the database refuses fails its own response; the case still completes
        yield* cases.saveResponse(c, response).pipe(
          Effect.catch(() =>
            cases.saveResponse(c, { ...response, status: "failed", output: null, usage: null, error: notStored })
          ),
          Effect.orDie
        )
      })

      return CaseGenerator.of({
        slots: Effect.fn("CaseGenerator.slots")(function*(job) {
          const c = yield* claimed(job)
          return Option.isSome(c) && c.value.stage._tag === "Generating" ? c.value.stage.slots.map((s) => s.response_id) : []
        }),
        answer: Effect.fn("CaseGenerator.answer")(function*(job, responseId) {
          const c = yield* claimed(job)
          if (Option.isNone(c) || c.value.stage._tag !== "Generating") return
          if ((yield* cases.responses(c.value)).some((r) => r.response_id === responseId)) return
          const slot = c.value.stage.slots.find((s) => s.response_id === responseId)
          if (slot !== undefined) yield* call(c.value, slot)
        }),
        finish: Effect.fn("CaseGenerator.finish")(function*(job) {
          const c = yield* claimed(job)
          if (Option.isNone(c)) return
          const next = complete(c.value, { claimId: job.claim_id, responses: yield* cases.responses(c.value) }, yield* DateTime.now)
          if (Result.isFailure(next)) return yield* Effect.die(next.failure)
          if (!(yield* cases.update(next.success))) {
            const now = yield* cases.find(c.value.leaderboard_id, c.value.id)
            if (Option.isNone(now) || now.value.stage._tag !== "Generated") {
              return yield* Effect.die(new Error(`case ${job.case_id} changed while it was generated`))
            }
          }
        })
      })
    })
  )
}
