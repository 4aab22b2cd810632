import { Duration, Effect, Option, Result, Schedule } from "effect"
import { CandidateCalls, type ChatTarget, ChatTargets } from "../inference/index.ts"
import { type Leaderboard, type LeaderboardId, LeaderboardRepository } from "../leaderboards/index.ts"
import { exactMatch, judgeModelOf, judgeRequest, parseJudgeReply } from "../runs/index.ts"
import type { ChatMessage, WorkspaceId } from "../shared/index.ts"
import type { BaseModel } from "./BaseModel.ts"
import type { FineTuneRun } from "./FineTuneRun.ts"
import { FineTuningApi } from "./FineTuningApi.ts"
import type { TrainingExample } from "./FineTuneRepository.ts"
import { type Artifact, withDemonstrations } from "./ModelVersion.ts"

/**
 * What a version answered on the held-out rows: each row's verdict by its example's index (true
 * right, false wrong, null when the judge could not judge it), and `correct` of `rows` (a null
 * verdict is not correct).
 */
export interface Score {
  readonly rows: number
  readonly correct: number
  readonly score: number | null
  readonly verdicts: ReadonlyMap<number, boolean | null>
}

/** A step's calls: its run, and the leaderboards it has looked up (their scoring rules). */
export interface Calls {
  readonly run_id: string
  readonly workspace_id: WorkspaceId
  readonly leaderboards: Map<string, Option.Option<Leaderboard>>
}

/** What is asked: the conversation, and the row (leaderboard and input) it is about. */
export interface Asked {
  readonly leaderboard_id: string
  readonly input: string
  readonly messages: ReadonlyArray<ChatMessage>
}

/** How to ask a model: the base model as it is, or a version (a tuned model, or a prompt program). */
export type Asker = (asked: Asked) => Effect.Effect<Result.Result<string, string>>

/**
 * The fine-tune steps' calls and scoring (FineTuneSteps): each call retried when the failure may
 * pass and traced like every call (source `fine_tune`); each answer scored by the rule of its row's
 * leaderboard (exact, or its judge; human leaderboards score exactly here). Built inside the layer.
 */
export const makeScoring = Effect.gen(function*() {
  const candidateCalls = yield* CandidateCalls
  const targets = yield* ChatTargets
  const leaderboards = yield* LeaderboardRepository
  const api = yield* FineTuningApi

  const callsOf = (run: FineTuneRun): Calls => ({
    run_id: run.id,
    workspace_id: run.workspace_id,
    leaderboards: new Map()
  })

  const complete = (
    calls: Calls,
    target: ChatTarget,
    asked: Asked,
    extra?: { readonly temperature?: number; readonly response_format?: unknown }
  ) =>
    candidateCalls.target(target)({ messages: asked.messages, ...extra }).pipe(
      Effect.retry({
        schedule: Schedule.exponential(Duration.millis(250)).pipe(Schedule.jittered),
        times: 3,
        while: (e) => e.upstream_status === null || e.upstream_status === 429 || e.upstream_status >= 500
      }),
      Effect.result,
      Effect.tap((result) =>
        candidateCalls.trace({
          workspace_id: calls.workspace_id,
          leaderboard_id: asked.leaderboard_id,
          leaderboard_model_id: null,
          source: "fine_tune",
          run_id: calls.run_id,
          input: asked.input,
          messages: asked.messages,
          token_id: null
        }, result)
      )
    )

  const leaderboardOf = (calls: Calls, id: LeaderboardId) =>
    calls.leaderboards.has(id)
      ? Effect.succeed(calls.leaderboards.get(id)!)
      : Effect.tap(leaderboards.find(id), (found) => Effect.sync(() => calls.leaderboards.set(id, found)))

  /** The answer's verdict: exact, or the judge's (null when the judge failed or its reply could not be read). */
  const correct = Effect.fnUntraced(function*(calls: Calls, example: TrainingExample, output: string) {
    const leaderboard = yield* leaderboardOf(calls, example.leaderboard_id)
    const judge = Option.flatMap(leaderboard, (l) => l.challenge.eval_type === "judge" ? judgeModelOf(l.challenge) : Option.none())
    if (Option.isNone(judge)) return exactMatch(output, example.reference)
    const ask = judgeRequest({ question: example.input, reference: example.reference, answer: output })
    const target = yield* targets.judge(judge.value.provider, judge.value.model, calls.workspace_id)
    const judged = yield* complete(calls, target, { ...example, messages: ask.messages }, {
      temperature: ask.temperature,
      response_format: ask.response_format
    })
    if (Result.isFailure(judged)) return null
    const verdict = parseJudgeReply(judged.success.output ?? "")
    return Result.isSuccess(verdict) ? verdict.success.verdict === "correct" : null
  })

  const askerOf = Effect.fnUntraced(function*(calls: Calls, who: { readonly base: BaseModel } | { readonly artifact: Artifact }) {
    const reply = (target: ChatTarget, shape: (m: ReadonlyArray<ChatMessage>) => ReadonlyArray<ChatMessage>): Asker => (asked) =>
      Effect.map(complete(calls, target, { ...asked, messages: shape(asked.messages) }), (r) =>
        Result.isSuccess(r) ? Result.succeed(r.success.output ?? "") : Result.fail(r.failure.reason))
    const same = (m: ReadonlyArray<ChatMessage>) => m
    if ("base" in who) {
      return who.base.trainer === "openai"
        ? reply(api.chatTarget(who.base.model_name), same)
        : reply(yield* targets.judge("router", who.base.model_name, calls.workspace_id), same)
    }
    const artifact = who.artifact
    return artifact.kind === "openai"
      ? reply(api.chatTarget(artifact.model), same)
      : reply(yield* targets.judge("router", artifact.base_model, calls.workspace_id), (m) => withDemonstrations(artifact.demonstrations, m))
  })

  /** Asks each example and scores the answer; a version whose call fails is wrong on that row (as a run's candidate is). */
  const scoreOn = Effect.fnUntraced(function*(calls: Calls, ask: Asker, examples: ReadonlyArray<TrainingExample>) {
    const verdicts = yield* Effect.forEach(examples, (example) =>
      Effect.flatMap(ask(example), (answer): Effect.Effect<boolean | null> =>
        Result.isFailure(answer) ? Effect.succeed(false) : correct(calls, example, answer.success)), { concurrency: 4 })
    const hits = verdicts.filter((verdict) => verdict === true).length
    return {
      rows: examples.length,
      correct: hits,
      score: examples.length === 0 ? null : hits / examples.length,
      verdicts: new Map(examples.map((example, i) => [example.index, verdicts[i] ?? null]))
    } satisfies Score
  })

  return { callsOf, complete, askerOf, scoreOn }
})
