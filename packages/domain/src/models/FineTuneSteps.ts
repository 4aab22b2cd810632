import { Context, DateTime, Duration, Effect, Layer, Option, Random, Result, Schedule } from "effect"
import { buildMessages, ChatTargets } from "../inference/index.ts"
import { type Leaderboard, LeaderboardRepository } from "../leaderboards/index.ts"
import { type DatasetMissing, type DatasetUnavailable, judgeModelOf, mapRows, RunDatasets } from "../runs/index.ts"
import { type FineTuneRunId, IdGenerator, ModelVersionId, storableText } from "../shared/index.ts"
import { DeploymentEntryId, DeploymentHistory, DeploymentHistoryEntry } from "./DeploymentHistory.ts"
import {
  type FineTuneEvent,
  type FineTuneRun,
  type Gate,
  type TrainingDataset,
  type TrainingSource
} from "./FineTuneRun.ts"
import { FineTuningApi, type FineTuningFailed } from "./FineTuningApi.ts"
import { decideGate, gateComparison, type GateEvidence, type GatePolicy } from "./GatePolicy.ts"
import { NoTrainingData, TrainingFailed } from "./ModelErrors.ts"
import { FineTuneRepository, type TrainingExample } from "./FineTuneRepository.ts"
import { makeRemote } from "./FineTuneRemote.ts"
import { type Asked, type Calls, makeScoring } from "./FineTuneScoring.ts"
import { gatePolicyOf } from "./Model.ts"
import { ModelRepository } from "./ModelRepository.ts"
import { type Artifact, ModelVersion } from "./ModelVersion.ts"
import { chatJsonl, demonstrationSets, examplesOf, holdOut, type LearnableRow, pick, selectRows } from "./TrainingData.ts"

/** How often a remote job is asked how it is doing (FINE_TUNE_POLL_INTERVAL_MS). */
export const FineTunePollInterval = Context.Reference<Duration.Duration>("@podium/domain/models/FineTunePollInterval", {
  defaultValue: () => Duration.seconds(10)
})

/** `limit.auto`: every row, up to this many. */
export const maxTrainingRows = 50_000
/** The fewest training examples each trainer accepts (OpenAI's fine-tuning needs 10). */
export const minimumTrainingRows = { openai: 10, few_shot: 1 } as const
/** A fine-tune whose fine-tuning API stays away this long (only passing failures meanwhile) fails. */
export const maxSilence = Duration.hours(6)
/** Held-out rows a version is measured on, at most. */
export const maxEvaluationRows = 200
/** Synthetic references a run writes at most (`create_synthetic_data`). */
export const maxSyntheticRows = 200

const retryable = (error: FineTuningFailed) => error.retryable
/** A passing failure of the fine-tuning API is tried again, six times over about a minute. */
const patience = Schedule.exponential(Duration.seconds(1)).pipe(Schedule.jittered)

/**
 * A fine-tune's steps, which only its durable workflow (FineTuneQueue's) calls, each safe to
 * repeat: `prepare` fixes the examples once (training and held-out), `train` starts training once
 * (a remote job is found again by the run id it carries), `follow` waits for it, `evaluate`
 * measures base and version on the held-out rows, `finish` creates the immutable version and, for
 * automatic runs with `auto_update_model`, gates its deployment on the paired comparison of the new
 * and the deployed version on the same held-out rows (decideGate under the model's gate policy).
 */
export class FineTuneSteps extends Context.Service<FineTuneSteps, {
  readonly describe: (runId: FineTuneRunId) => Effect.Effect<{ readonly trainer: FineTuneRun["trainer"] }>
  readonly prepare: (runId: FineTuneRunId) => Effect.Effect<void, NoTrainingData | TrainingFailed>
  readonly train: (runId: FineTuneRunId) => Effect.Effect<void, TrainingFailed>
  readonly follow: (runId: FineTuneRunId) => Effect.Effect<void, TrainingFailed>
  readonly evaluate: (runId: FineTuneRunId) => Effect.Effect<void>
  readonly finish: (runId: FineTuneRunId) => Effect.Effect<void>
  readonly fail: (runId: FineTuneRunId, error: string) => Effect.Effect<void>
}>()("@podium/domain/models/FineTuneSteps") {
  static readonly layer = Layer.effect(
    FineTuneSteps,
    Effect.gen(function*() {
      const modelRepository = yield* ModelRepository
      const runs = yield* FineTuneRepository
      const api = yield* FineTuningApi
      const rowsOf = yield* RunDatasets
      const leaderboards = yield* LeaderboardRepository
      const targets = yield* ChatTargets
      const ids = yield* IdGenerator
      const history = yield* DeploymentHistory
      const { cancelRemote, event, look, remoteFailure, remoteJobOf, runOf, withEvents } = yield* makeRemote
      const { askerOf, callsOf, complete, scoreOn } = yield* makeScoring
      const now = DateTime.now

      const describe = (runId: FineTuneRunId) => Effect.map(runOf(runId), (run) => ({ trainer: run.trainer }))

      /** Synthetic references: the leaderboard's judge model answers inputs that have none. */
      const synthesise = Effect.fnUntraced(function*(calls: Calls, leaderboard: Leaderboard, inputs: ReadonlyArray<Omit<Asked, "leaderboard_id">>) {
        const judge = judgeModelOf(leaderboard.challenge)
        if (Option.isNone(judge) || inputs.length === 0) return inputs.map(() => null)
        const target = yield* targets.judge(judge.value.provider, judge.value.model, leaderboard.workspace_id)
        return yield* Effect.forEach(inputs, (input) =>
          Effect.map(complete(calls, target, { ...input, leaderboard_id: leaderboard.id }), (r) =>
            Result.isSuccess(r) && r.success.output !== null && r.success.output.trim() !== "" ? storableText(r.success.output) : null), {
          concurrency: 4
        })
      })

      const prepare = Effect.fn("FineTuneSteps.prepare")(function*(runId: FineTuneRunId) {
        const run = yield* runOf(runId)
        if (run.status !== "queued") return
        const model = yield* modelRepository.find(run.model_id)
        if (Option.isNone(model)) return yield* new NoTrainingData({ model_id: run.model_id, message: "the model was deleted" })
        const learnable: Array<LearnableRow> = []
        const sources: Array<TrainingSource> = []
        const notes: Array<FineTuneEvent> = []
        let synthetic = 0
        for (const leaderboardId of model.value.leaderboard_ids) {
          const leaderboard = yield* leaderboards.find(leaderboardId)
          if (Option.isNone(leaderboard)) continue
          // one leaderboard whose dataset cannot be read now does not stop the others'
          const loaded = yield* Effect.result(rowsOf.load(leaderboard.value) as Effect.Effect<
            Effect.Success<ReturnType<typeof rowsOf.load>>,
            DatasetUnavailable | DatasetMissing
          >)
          if (Result.isFailure(loaded)) {
            const reason = loaded.failure._tag === "DatasetMissing" ? loaded.failure.message : loaded.failure.reason
            notes.push(yield* event("warning", `leaderboard ${leaderboardId}: dataset not read: ${reason}`))
            continue
          }
          const rows = mapRows(loaded.success.raw).rows.flatMap((row) => {
            const prompt = buildMessages(row.prompt, leaderboard.value.challenge)
            return Result.isSuccess(prompt) ? [{ input: row.input, reference: row.reference, messages: prompt.success.messages }] : []
          })
          let references = rows.map((row) => row.reference)
          if (run.options.create_synthetic_data) {
            const missing = rows.flatMap((row, i) => row.reference === null ? [i] : []).slice(0, maxSyntheticRows - synthetic)
            const written = yield* synthesise(callsOf(run), leaderboard.value, missing.map((i) => rows[i]!))
            references = [...references]
            missing.forEach((i, k) => {
              if (written[k] !== null) {
                references[i] = written[k]!
                synthetic++
              }
            })
          }
          const usable = rows.flatMap((row, i) => references[i] === null ? [] : [{ ...row, reference: references[i]! }])
          usable.forEach((row, i) =>
            learnable.push({
              leaderboard_id: leaderboardId,
              ...row,
              recency: usable.length === 1 ? 1 : i / (usable.length - 1)
            })
          )
          sources.push({
            leaderboard_id: leaderboardId,
            dataset_type: leaderboard.value.challenge.dataset_type,
            version: loaded.success.version,
            url: loaded.success.url,
            rows: usable.length
          })
        }
        const size = run.options.dataset_size
        // every row (ALL, or LIMIT with auto) up to maxTrainingRows; else the rows asked for
        const every = size.mode === "ALL" || size.limit?.auto !== false
        const limit = every ? maxTrainingRows : Math.min(maxTrainingRows, size.limit?.rows ?? maxTrainingRows)
        const algorithm = size.limit?.algorithm ?? "LAST_N"
        const seed = `${run.id}:${yield* Random.nextIntBetween(0, 2 ** 31 - 1)}`
        const chosen = selectRows(learnable, { algorithm, limit, seed })
        const split = holdOut(chosen, size.held_out ?? 0.1, seed)
        const needed = minimumTrainingRows[run.trainer]
        if (split.training.length < needed) {
          return yield* new TrainingFailed({
            run_id: runId,
            reason: `training data: ${split.training.length} rows with an input and a reference to train on; ` +
              `the ${run.trainer} trainer needs at least ${needed}`
          })
        }
        const dataset: TrainingDataset = {
          mode: size.mode ?? "LIMIT",
          algorithm,
          limit: every ? null : limit,
          seed,
          held_out: size.held_out ?? 0.1,
          available_rows: learnable.length,
          synthetic_rows: synthetic,
          training_rows: split.training.length,
          held_out_rows: split.held_out.length,
          sources
        }
        if (yield* runs.start(runId, dataset, examplesOf(split), yield* now)) {
          yield* runs.progress(runId, {
            events: withEvents(run, [
              ...notes,
              yield* event("info", `training data: ${split.training.length} rows, ${split.held_out.length} held out`)
            ])
          })
        }
      })

      /** `openai`: hyperparameters for the data's size when `hypertuning_enabled` (the service's own choice otherwise). */
      const hyperparameters = (rows: number) => ({
        n_epochs: rows < 100 ? 5 : rows < 1_000 ? 3 : 2,
        learning_rate_multiplier: rows < 100 ? 2 : 1,
        batch_size: "auto" as const
      })

      const trainRemote = Effect.fnUntraced(function*(run: FineTuneRun) {
        if (run.remote !== null) return
        const persist = <A>(effect: Effect.Effect<A, FineTuningFailed>) =>
          effect.pipe(Effect.retry({ schedule: patience, times: 6, while: retryable }), Effect.mapError(remoteFailure(run.id)))
        // a job this run created before (a restart, or a create whose answer was lost) is found by the
        // run id it carries: looking is part of every try, so no try makes a second job
        const existing = yield* persist(remoteJobOf(run.id))
        let job = Option.getOrUndefined(existing)
        let file: string | null = null
        if (job === undefined) {
          const training = yield* runs.examples(run.id, "training")
          file = yield* persist(api.upload(`podium-${run.id}.jsonl`, chatJsonl(training)))
          const create = api.create({
            model: run.base_model.model_name,
            training_file: file,
            validation_file: null,
            metadata: { podium_run_id: run.id, podium_model_id: run.model_id },
            suffix: "podium",
            hyperparameters: run.options.hypertuning_enabled ? hyperparameters(training.length) : null
          })
          job = yield* persist(Effect.flatMap(remoteJobOf(run.id), Option.match({ onSome: Effect.succeed, onNone: () => create })))
        }
        const recorded = yield* runs.progress(run.id, {
          remote: { job_id: job.id, training_file: file, validation_file: null, status: job.status },
          events: withEvents(run, [yield* event("info", `fine-tuning job ${job.id} ${existing._tag === "Some" ? "found again" : "created"}`)])
        })
        // the run ended meanwhile (its model was deleted): nobody will follow the job
        if (!recorded) yield* cancelRemote(run.id, job.id)
      })

      const trainFewShot = Effect.fnUntraced(function*(run: FineTuneRun) {
        if (run.artifact !== null) return
        const calls = callsOf(run)
        const training = yield* runs.examples(run.id, "training")
        const seed = run.dataset?.seed ?? run.id
        // demonstrations are chosen on validation rows carved from the training rows, so the held-out rows stay unseen
        const validation = pick(training, Math.min(20, Math.floor(training.length / 2)), `${seed}:validation`)
        const chosenForValidation = new Set(validation.map((e) => e.index))
        const pool = training.filter((e) => !chosenForValidation.has(e.index))
        const wanted = run.options.hypertuning_enabled ? [2, 4, 8] : [4]
        const sizes = wanted.some((size) => size <= pool.length) ? wanted : [pool.length]
        const sets = demonstrationSets(pool, sizes, 3, seed)
        const base = yield* askerOf(calls, { base: run.base_model })
        const program = (set: ReadonlyArray<TrainingExample>): Artifact => ({
          kind: "few_shot",
          base_model: run.base_model.model_name,
          demonstrations: set.map((e) => ({
            messages: [...e.messages.filter((m) => m.role !== "system"), { role: "assistant", content: e.reference }]
          }))
        })
        let best = { set: sets.at(-1) ?? [], score: null as number | null }
        if (validation.length > 0) {
          best = { set: [], score: -1 }
          for (const set of sets) {
            const ask = set.length === 0 ? base : yield* askerOf(calls, { artifact: program(set) })
            const { score } = yield* scoreOn(calls, ask, validation)
            // ties go to the fewer demonstrations (the earlier set): shorter prompts, same score
            if ((score ?? 0) > (best.score ?? -1)) best = { set, score }
          }
        }
        const current = yield* runOf(run.id)
        yield* runs.progress(run.id, {
          artifact: program(best.set),
          metrics: {
            ...current.metrics,
            kind: "prompt_program",
            selection: {
              validation_rows: validation.length,
              programs_tried: validation.length > 0 ? sets.length : 1,
              demonstrations: best.set.length,
              validation_score: best.score
            }
          },
          events: withEvents(current, [
            yield* event("info", `chose ${best.set.length} demonstrations of ${sets.length} programs tried on ${validation.length} validation rows`)
          ])
        })
      })

      const train = Effect.fn("FineTuneSteps.train")(function*(runId: FineTuneRunId) {
        const run = yield* runOf(runId)
        if (run.status !== "running") return
        yield* run.trainer === "openai" ? trainRemote(run) : trainFewShot(run)
      })

      const follow = Effect.fn("FineTuneSteps.follow")(function*(runId: FineTuneRunId) {
        const interval = yield* FineTunePollInterval
        let answered = yield* now
        while (true) {
          const run = yield* runOf(runId)
          if (run.trainer !== "openai" || run.artifact !== null) return
          if (run.status === "cancelled") return yield* cancelRemote(runId, run.remote?.job_id ?? null)
          if (run.status !== "running") return
          const ended = yield* look(run).pipe(
            Effect.tap(() => Effect.map(now, (at) => answered = at)),
            Effect.catchTag("FineTuningFailed", (error) => {
              if (!error.retryable) return Effect.fail(remoteFailure(runId)(error))
              // a service that stays away this long is not coming back for this run
              return Effect.flatMap(now, (at) =>
                Duration.isGreaterThan(DateTime.distance(answered, at), maxSilence)
                  ? Effect.fail(new TrainingFailed({
                    run_id: runId,
                    reason: `the fine-tuning API has not answered for ${Duration.format(maxSilence)}: ${error.reason}`
                  }))
                  : Effect.succeed(false))
            })
          )
          if (ended) return
          yield* Effect.sleep(interval)
        }
      })

      const heldOut = (runId: FineTuneRunId) => Effect.map(runs.examples(runId, "held_out"), (rows) => rows.slice(0, maxEvaluationRows))

      const evaluate = Effect.fn("FineTuneSteps.evaluate")(function*(runId: FineTuneRunId) {
        const run = yield* runOf(runId)
        if (run.status !== "running" || run.artifact === null || run.metrics?.held_out !== undefined) return
        const calls = callsOf(run)
        const rows = yield* heldOut(runId)
        const [before, after] = yield* Effect.all([
          Effect.flatMap(askerOf(calls, { base: run.base_model }), (ask) => scoreOn(calls, ask, rows)),
          Effect.flatMap(askerOf(calls, { artifact: run.artifact }), (ask) => scoreOn(calls, ask, rows))
        ])
        const current = yield* runOf(runId)
        yield* runs.progress(runId, {
          metrics: {
            ...current.metrics,
            held_out: {
              rows: rows.length,
              correct_before: before.correct,
              score_before: before.score,
              correct_after: after.correct,
              score_after: after.score
            }
          },
          events: withEvents(current, [
            yield* event("info", rows.length === 0
              ? "no held-out rows: the version is not measured"
              : `held-out score ${before.score?.toFixed(3)} before, ${after.score?.toFixed(3)} after, on ${rows.length} rows`)
          ])
        })
      })

      const scoreAfter = (run: FineTuneRun): number | null => {
        const held = run.metrics?.held_out as { readonly score_after?: number | null } | undefined
        return held?.score_after ?? null
      }

      /** The gate's decision in the model's deployment history (once per run: a repeat stores nothing). */
      const recordGate = Effect.fnUntraced(function*(
        run: FineTuneRun,
        gate: Gate,
        versionId: ModelVersionId,
        at: DateTime.Utc
      ) {
        yield* history.append(
          new DeploymentHistoryEntry({
            id: yield* ids.make(DeploymentEntryId),
            workspace_id: run.workspace_id,
            model_id: run.model_id,
            at,
            kind: "gate",
            from_version_id: gate.deployed_version_id === null ? null : ModelVersionId.make(gate.deployed_version_id),
            to_version_id: gate.decision === "deploy" ? versionId : null,
            actor: { type: "system", id: "fine_tune_gate", fine_tune_run_id: run.id },
            evidence: { ...gate },
            reason: gate.reason
          })
        )
      })

      /**
       * The gate under the model's policy. With a version deployed, both versions answer the same
       * held-out rows now (the deployed one was never measured on this run's rows, and the new
       * version's per-row verdicts from `evaluate` are not kept), and the paired comparison of
       * their verdicts decides; with none deployed, the new version is deployed.
       */
      const gateFor = Effect.fnUntraced(function*(run: FineTuneRun, artifact: Artifact, policy: GatePolicy) {
        const deployed = yield* runs.activeVersion(run.model_id)
        if (Option.isNone(deployed)) {
          return { ...decideGate(policy, null), policy, deployed_version_id: null, candidate_score: scoreAfter(run), deployed_score: null }
        }
        const calls = callsOf(run)
        const rows = yield* heldOut(run.id)
        const [candidate, incumbent] = yield* Effect.all([
          Effect.flatMap(askerOf(calls, { artifact }), (ask) => scoreOn(calls, ask, rows)),
          Effect.flatMap(askerOf(calls, { artifact: deployed.value.artifact }), (ask) => scoreOn(calls, ask, rows))
        ])
        return {
          ...decideGate(policy, gateComparison(candidate.verdicts, incumbent.verdicts)),
          policy,
          deployed_version_id: deployed.value.id,
          candidate_score: candidate.score,
          deployed_score: incumbent.score
        } satisfies GateEvidence
      })

      const finish = Effect.fn("FineTuneSteps.finish")(function*(runId: FineTuneRunId) {
        const run = yield* runOf(runId)
        if (run.status === "succeeded") {
          // the end landed and the gate's record may not have
          if (run.gate !== null && run.version_id !== null) {
            yield* recordGate(run, run.gate, run.version_id, run.finished_at ?? (yield* now))
          }
          // the end landed and the activation may not have: finish it (once the version is deployed, nothing to do)
          if (run.gate?.decision === "deploy" && run.version_id !== null) {
            const version = yield* runs.findVersion(run.version_id)
            if (Option.isSome(version) && version.value.deployment_status === "none") yield* runs.activate(run.version_id, yield* now)
          }
          return
        }
        if (run.status !== "running" || run.artifact === null) return
        const model = yield* modelRepository.find(run.model_id)
        let gate: GateEvidence | null = null
        if (run.trigger !== "manual" && Option.isSome(model) && model.value.auto_update_model) {
          gate = yield* gateFor(run, run.artifact, gatePolicyOf(model.value))
        }
        const at = yield* now
        const version = new ModelVersion({
          id: yield* ids.make(ModelVersionId),
          model_id: run.model_id,
          fine_tune_run_id: run.id,
          trainer: run.trainer,
          base_model: run.base_model,
          metrics: run.metrics ?? {},
          artifact: run.artifact,
          deployment_status: "none",
          deployment: null,
          deployment_error: null,
          deployed_at: null,
          created_at: run.created_at,
          completed_at: at
        })
        const ended = yield* runs.end(runId, { status: "succeeded", version, gate, error: null }, at)
        if (ended && gate !== null) yield* recordGate(run, gate, version.id, at)
        if (ended && gate?.decision === "deploy") yield* runs.activate(version.id, at)
      })

      const fail = Effect.fn("FineTuneSteps.fail")(function*(runId: FineTuneRunId, error: string) {
        const run = yield* runOf(runId)
        const ended = yield* runs.end(runId, { status: "failed", version: null, gate: null, error: storableText(error) }, yield* now)
        if (ended && run.trainer === "openai" && run.artifact === null) yield* cancelRemote(runId, run.remote?.job_id ?? null)
      })

      return FineTuneSteps.of({ describe, prepare, train, follow, evaluate, finish, fail })
    })
  )
}
