import { Context, DateTime, Duration, Effect, Layer, Option, Random, Result, Schedule } from "effect"
import type { Principal } from "../access/index.ts"
import { DatasetRepository } from "../datasets/index.ts"
import { buildMessages, ChatProvider, type ChatTarget, ChatTargets, TraceWriter } from "../inference/index.ts"
import { type Leaderboard, type LeaderboardId, LeaderboardRepository } from "../leaderboards/index.ts"
import {
  type DatasetMissing,
  type DatasetUnavailable,
  exactMatch,
  judgeModelOf,
  judgeRequest,
  mapRows,
  parseJudgeReply,
  RunDatasets
} from "../runs/index.ts"
import type { IntegrationUnavailable } from "../integrations/index.ts"
import { type ChatMessage, IdGenerator, NotFound, storableText, storeThenEnqueue, type WorkspaceId } from "../shared/index.ts"
import type { BaseModel } from "./BaseModel.ts"
import { BaseModels } from "./BaseModels.ts"
import {
  type FineTuneEvent,
  type FineTuneOptions,
  FineTuneRun,
  type FineTuneTrigger,
  type Gate,
  gateOf,
  isActive,
  maxEvents,
  type TrainingDataset,
  type TrainingSource
} from "./FineTuneRun.ts"
import { FineTuningApi, type FineTuningFailed, type RemoteEvent } from "./FineTuningApi.ts"
import { type DatasetSize, type Model, nextFineTune } from "./Model.ts"
import {
  BaseModelUnavailable,
  FineTuneInProgress,
  NoTrainingData,
  TrainingFailed
} from "./ModelErrors.ts"
import { FineTuneQueue } from "./FineTuneQueue.ts"
import { FineTuneRepository, type TrainingExample } from "./FineTuneRepository.ts"
import { ModelRepository } from "./ModelRepository.ts"
import { Models } from "./Models.ts"
import { type Artifact, ModelVersion, withDemonstrations } from "./ModelVersion.ts"
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

const defaultDatasetSize: DatasetSize = { mode: "LIMIT", limit: { auto: true, algorithm: "LAST_N" }, held_out: 0.1 }

export interface StartRequest {
  readonly dataset_size?: DatasetSize | undefined
  readonly create_synthetic_data?: boolean | undefined
  readonly hypertuning_enabled?: boolean | undefined
}

type Page = { readonly limit: number; readonly offset: number }

const retryable = (error: FineTuningFailed) => error.retryable
/** A passing failure of the fine-tuning API is tried again, six times over about a minute. */
const patience = Schedule.exponential(Duration.seconds(1)).pipe(Schedule.jittered)

/** What a version answered on the held-out rows. */
interface Score {
  readonly rows: number
  readonly correct: number
  readonly score: number | null
}

/**
 * Fine-tunes: a model learns from its leaderboards' consolidated rows. A run is a durable job
 * (FineTuneQueue) whose steps below are each safe to repeat: `prepare` fixes the examples once
 * (training and held-out), `train` starts training once (a remote job is found again by the run id
 * it carries), `follow` waits for it, `evaluate` measures base and version on the held-out rows,
 * `finish` creates the immutable version and, for automatic runs with `auto_update_model`, gates its
 * deployment on that score.
 */
export class FineTunes extends Context.Service<FineTunes, {
  readonly start: (
    principal: Principal,
    modelId: string,
    request: StartRequest
  ) => Effect.Effect<FineTuneRun, NotFound | NoTrainingData | BaseModelUnavailable | FineTuneInProgress | IntegrationUnavailable>
  readonly list: (principal: Principal, modelId: string, page: Page) => Effect.Effect<ReadonlyArray<FineTuneRun>, NotFound>
  /** Asks the remote job of the run (the newest run when none is named) how it is doing now. */
  readonly sync: (principal: Principal, modelId: string, runId: string | undefined) => Effect.Effect<FineTuneRun, NotFound>
  readonly versions: (principal: Principal, modelId: string) => Effect.Effect<ReadonlyArray<ModelVersion>, NotFound>
  readonly describe: (runId: string) => Effect.Effect<{ readonly trainer: FineTuneRun["trainer"] }>
  readonly prepare: (runId: string) => Effect.Effect<void, NoTrainingData | TrainingFailed>
  readonly train: (runId: string) => Effect.Effect<void, TrainingFailed>
  readonly follow: (runId: string) => Effect.Effect<void, TrainingFailed>
  readonly evaluate: (runId: string) => Effect.Effect<void>
  readonly finish: (runId: string) => Effect.Effect<void>
  readonly fail: (runId: string, error: string) => Effect.Effect<void>
  /** Enqueues again runs queued for over a minute (a crash between storing and enqueueing). */
  readonly requeue: Effect.Effect<number>
  /** Starts due scheduled fine-tunes and continuous ones whose data changed; answers how many. */
  readonly runSchedules: Effect.Effect<number>
}>()("@podium/domain/models/FineTunes") {
  static readonly layer = Layer.effect(
    FineTunes,
    Effect.gen(function*() {
      const models = yield* Models
      const modelRepository = yield* ModelRepository
      const runs = yield* FineTuneRepository
      const queue = yield* FineTuneQueue
      const bases = yield* BaseModels
      const api = yield* FineTuningApi
      const rowsOf = yield* RunDatasets
      const datasets = yield* DatasetRepository
      const leaderboards = yield* LeaderboardRepository
      const provider = yield* ChatProvider
      const targets = yield* ChatTargets
      const ids = yield* IdGenerator
      const traces = yield* TraceWriter

      const launch = Effect.fnUntraced(function*(model: Model, trigger: FineTuneTrigger, request: StartRequest) {
        if (model.leaderboard_ids.length === 0) {
          return yield* new NoTrainingData({
            model_id: model.id,
            message: "Assign the model a leaderboard to learn from (leaderboard_ids), then fine-tune it"
          })
        }
        const chosen = model.selected_base_model_version_id
        const unavailable = (message: string) => new BaseModelUnavailable({ model_id: model.id, message })
        if (chosen === null) {
          return yield* unavailable("Choose a base model first: PATCH the model with selected_base_model_version_id from GET /api/base-models")
        }
        const base = yield* bases.find(model.workspace_id, chosen)
        if (Option.isNone(base)) {
          return yield* unavailable("The model's base model is no longer offered: choose another from GET /api/base-models")
        }
        const options: FineTuneOptions = {
          dataset_size: request.dataset_size ?? defaultDatasetSize,
          create_synthetic_data: request.create_synthetic_data ?? false,
          hypertuning_enabled: request.hypertuning_enabled ?? model.hypertuning_parameters
        }
        const run = new FineTuneRun({
          id: yield* ids.next,
          model_id: model.id,
          workspace_id: model.workspace_id,
          status: "queued",
          trigger,
          trainer: base.value.trainer,
          base_model: base.value,
          options,
          dataset: null,
          remote: null,
          metrics: null,
          events: [],
          artifact: null,
          version_id: null,
          gate: null,
          error: null,
          created_at: yield* DateTime.now,
          started_at: null,
          finished_at: null
        })
        yield* storeThenEnqueue(runs.create(run), queue.enqueue(run), { kind: "fine-tune", id: run.id })
        return run
      })

      const start = Effect.fn("FineTunes.start")(function*(principal: Principal, modelId: string, request: StartRequest) {
        return yield* launch(yield* models.visible(principal, modelId), "manual", request)
      })

      const list = Effect.fn("FineTunes.list")(function*(principal: Principal, modelId: string, page: Page) {
        const model = yield* models.visible(principal, modelId)
        return yield* runs.list(model.id, page)
      })

      const versions = Effect.fn("FineTunes.versions")(function*(principal: Principal, modelId: string) {
        const model = yield* models.visible(principal, modelId)
        return yield* runs.versions(model.id)
      })

      const runOf = (runId: string) =>
        Effect.flatMap(runs.find(runId), Option.match({
          onNone: () => Effect.die(new Error(`fine-tune run ${runId} is gone`)),
          onSome: Effect.succeed
        }))

      const now = DateTime.now
      const event = (level: string, message: string) =>
        Effect.map(now, (at): FineTuneEvent => ({ at: DateTime.formatIso(at), level, message: storableText(message) }))

      /** The run's events with `more` merged in (the same event is kept once), oldest first, the newest `maxEvents`. */
      const withEvents = (run: FineTuneRun, more: ReadonlyArray<FineTuneEvent>) => {
        const seen = new Set(run.events.map((e) => `${e.at}\u0001${e.message}`))
        const fresh = more.filter((e) => !seen.has(`${e.at}\u0001${e.message}`))
        return [...run.events, ...fresh].sort((a, b) => a.at.localeCompare(b.at)).slice(-maxEvents)
      }

      // ---- calls: retried when the failure may pass, and traced like every call (source `fine_tune`)

      /** A step's calls: its run, and the leaderboards it has looked up (their scoring rules). */
      interface Calls {
        readonly run_id: string
        readonly workspace_id: WorkspaceId
        readonly leaderboards: Map<string, Option.Option<Leaderboard>>
      }
      const callsOf = (run: FineTuneRun): Calls => ({
        run_id: run.id,
        workspace_id: run.workspace_id as WorkspaceId,
        leaderboards: new Map()
      })

      /** What is asked: the conversation, and the row (leaderboard and input) it is about. */
      interface Asked {
        readonly leaderboard_id: string
        readonly input: string
        readonly messages: ReadonlyArray<ChatMessage>
      }

      const complete = (calls: Calls, target: ChatTarget, asked: Asked, extra?: { readonly response_format?: unknown }) =>
        provider.complete(target, { messages: asked.messages, ...extra }).pipe(
          Effect.retry({
            schedule: Schedule.exponential(Duration.millis(250)).pipe(Schedule.jittered),
            times: 3,
            while: (e) => e.upstream_status === null || e.upstream_status === 429 || e.upstream_status >= 500
          }),
          Effect.result,
          Effect.tap((result) =>
            Effect.gen(function*() {
              yield* traces.record({
                id: yield* ids.next,
                workspace_id: calls.workspace_id,
                leaderboard_id: asked.leaderboard_id,
                leaderboard_model_id: null,
                source: "fine_tune",
                run_id: calls.run_id,
                input: storableText(asked.input),
                messages: asked.messages.map((m) => ({ role: storableText(m.role), content: storableText(m.content) })),
                output: Result.isSuccess(result) && result.success.output !== null ? storableText(result.success.output) : null,
                status: Result.isSuccess(result) ? "success" : "error",
                error: Result.isFailure(result) ? storableText(result.failure.reason) : null,
                latency_ms: Result.isSuccess(result) ? result.success.latencyMs : result.failure.latency_ms,
                usage: Result.isSuccess(result) && result.success.usage !== null ? { ...result.success.usage } : null,
                cost_usd: Result.isSuccess(result) ? result.success.costUsd : null,
                token_id: null,
                created_at: yield* DateTime.now
              })
            })
          )
        )

      // ---- scoring: the row's leaderboard's own rule (exact, or its judge; human leaderboards score exactly here)

      const leaderboardOf = (calls: Calls, id: string) =>
        calls.leaderboards.has(id)
          ? Effect.succeed(calls.leaderboards.get(id)!)
          : Effect.tap(leaderboards.find(id as LeaderboardId), (found) => Effect.sync(() => calls.leaderboards.set(id, found)))

      const correct = Effect.fnUntraced(function*(calls: Calls, example: TrainingExample, output: string) {
        const leaderboard = yield* leaderboardOf(calls, example.leaderboard_id)
        const judge = Option.flatMap(leaderboard, (l) => l.challenge.eval_type === "judge" ? judgeModelOf(l.challenge) : Option.none())
        if (Option.isNone(judge)) return exactMatch(output, example.reference)
        const ask = judgeRequest({ question: example.input, reference: example.reference, answer: output })
        const target = yield* targets.judge(judge.value.provider, judge.value.model, calls.workspace_id)
        const judged = yield* complete(calls, target, { ...example, messages: ask.messages }, { response_format: ask.response_format })
        if (Result.isFailure(judged)) return false
        const verdict = parseJudgeReply(judged.success.output ?? "")
        return Result.isSuccess(verdict) && verdict.success.verdict === "correct"
      })

      /** How to ask a model: the base model as it is, or a version (a tuned model, or a prompt program). */
      type Asker = (asked: Asked) => Effect.Effect<Result.Result<string, string>>

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

      const scoreOn = Effect.fnUntraced(function*(calls: Calls, ask: Asker, examples: ReadonlyArray<TrainingExample>) {
        const verdicts = yield* Effect.forEach(examples, (example) =>
          Effect.flatMap(ask(example), (answer) =>
            Result.isFailure(answer) ? Effect.succeed(false) : correct(calls, example, answer.success)), { concurrency: 4 })
        const hits = verdicts.filter(Boolean).length
        return { rows: examples.length, correct: hits, score: examples.length === 0 ? null : hits / examples.length } satisfies Score
      })

      // ---- steps

      const describe = (runId: string) => Effect.map(runOf(runId), (run) => ({ trainer: run.trainer }))

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

      const prepare = Effect.fn("FineTunes.prepare")(function*(runId: string) {
        const run = yield* runOf(runId)
        if (run.status !== "queued") return
        const model = yield* modelRepository.find(run.model_id)
        if (Option.isNone(model)) return yield* new NoTrainingData({ model_id: run.model_id, message: "the model was deleted" })
        const learnable: Array<LearnableRow> = []
        const sources: Array<TrainingSource> = []
        const notes: Array<FineTuneEvent> = []
        let synthetic = 0
        for (const leaderboardId of model.value.leaderboard_ids) {
          const leaderboard = yield* leaderboards.find(leaderboardId as LeaderboardId)
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

      const remoteFailure = (runId: string) => (error: FineTuningFailed) =>
        new TrainingFailed({ run_id: runId, reason: `fine-tuning API: ${error.reason}` })

      /** The remote job this run created, found by the run id it carries. */
      const remoteJobOf = (runId: string) => api.findByMetadata("podium_run_id", runId)

      /** Stops a remote job that no run follows any more; its service may be down: best effort, logged. */
      const cancelRemote = (runId: string, jobId: string | null) =>
        Effect.gen(function*() {
          const id = jobId ?? Option.getOrUndefined(yield* remoteJobOf(runId))?.id
          if (id !== undefined) yield* api.cancel(id)
        }).pipe(
          Effect.catchCause((cause) =>
            Effect.logWarning("remote fine-tuning job not cancelled", cause).pipe(Effect.annotateLogs({ run_id: runId }))
          )
        )

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

      const train = Effect.fn("FineTunes.train")(function*(runId: string) {
        const run = yield* runOf(runId)
        if (run.status !== "running") return
        yield* run.trainer === "openai" ? trainRemote(run) : trainFewShot(run)
      })

      /** A remote event as the run shows it: the tuned model's name (where the version lives) is never shown. */
      const eventOf = (tuned: string | null) => (e: RemoteEvent): FineTuneEvent => ({
        at: e.created_at,
        level: e.level,
        message: storableText(tuned === null ? e.message : e.message.split(tuned).join("[the tuned model]"))
      })

      /**
       * One look at the remote job, while the run trains: its status, events and training metrics
       * recorded (never over what later steps wrote); answers whether it has ended.
       */
      const look = Effect.fnUntraced(function*(run: FineTuneRun) {
        const remote = run.remote
        if (remote === null || run.artifact !== null) return false
        const [job, events] = yield* Effect.all([api.job(remote.job_id), api.events(remote.job_id)])
        const training = events.flatMap((e) => e.metrics === null ? [] : [e.metrics]).at(-1)
        const succeeded = job.status === "succeeded" && job.fine_tuned_model !== null
        yield* runs.progress(run.id, {
          remote: { ...remote, status: job.status },
          events: withEvents(run, events.map(eventOf(job.fine_tuned_model))),
          metrics: { trained_tokens: job.trained_tokens, ...(training === undefined ? {} : { training }) },
          ...(succeeded ? { artifact: { kind: "openai" as const, model: job.fine_tuned_model! } } : {}),
          while_training: true
        })
        if (job.status === "failed" || job.status === "cancelled" || (job.status === "succeeded" && !succeeded)) {
          return yield* new TrainingFailed({
            run_id: run.id,
            reason: `the fine-tuning job ${job.status === "succeeded" ? "named no tuned model" : job.status}` +
              (job.error === null ? "" : `: ${job.error}`)
          })
        }
        return succeeded
      })

      const follow = Effect.fn("FineTunes.follow")(function*(runId: string) {
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

      const heldOut = (runId: string) => Effect.map(runs.examples(runId, "held_out"), (rows) => rows.slice(0, maxEvaluationRows))

      const evaluate = Effect.fn("FineTunes.evaluate")(function*(runId: string) {
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

      const finish = Effect.fn("FineTunes.finish")(function*(runId: string) {
        const run = yield* runOf(runId)
        if (run.status === "succeeded") {
          // the end landed and the activation may not have: finish it (once the version is deployed, nothing to do)
          if (run.gate?.decision === "deploy" && run.version_id !== null) {
            const version = yield* runs.findVersion(run.version_id)
            if (Option.isSome(version) && version.value.deployment_status === "none") yield* runs.activate(run.version_id, yield* now)
          }
          return
        }
        if (run.status !== "running" || run.artifact === null) return
        const model = yield* modelRepository.find(run.model_id)
        let gate: Gate | null = null
        if (run.trigger !== "manual" && Option.isSome(model) && model.value.auto_update_model) {
          const deployed = yield* runs.activeVersion(run.model_id)
          const calls = callsOf(run)
          const deployedScore = Option.isNone(deployed)
            ? null
            : (yield* scoreOn(calls, yield* askerOf(calls, { artifact: deployed.value.artifact }), yield* heldOut(runId))).score
          gate = gateOf(scoreAfter(run), Option.isNone(deployed) ? null : { version_id: deployed.value.id, score: deployedScore })
        }
        const at = yield* now
        const version = new ModelVersion({
          id: yield* ids.next,
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
        if (ended && gate?.decision === "deploy") yield* runs.activate(version.id, at)
      })

      const fail = Effect.fn("FineTunes.fail")(function*(runId: string, error: string) {
        const run = yield* runOf(runId)
        const ended = yield* runs.end(runId, { status: "failed", version: null, gate: null, error: storableText(error) }, yield* now)
        if (ended && run.trainer === "openai" && run.artifact === null) yield* cancelRemote(runId, run.remote?.job_id ?? null)
      })

      const sync = Effect.fn("FineTunes.sync")(function*(principal: Principal, modelId: string, runId: string | undefined) {
        const model = yield* models.visible(principal, modelId)
        const found = runId === undefined
          ? Option.fromUndefinedOr((yield* runs.list(model.id, { limit: 1, offset: 0 }))[0])
          : Option.filter(yield* runs.find(runId), (run) => run.model_id === model.id)
        if (Option.isNone(found)) return yield* new NotFound({ resource: "fine-tune run", id: runId ?? "(latest)" })
        const run = found.value
        if (run.status === "running") {
          // what the remote service says now (while it trains); its failures are the run's to handle, not this request's
          yield* look(run).pipe(Effect.ignore)
        }
        return yield* runOf(run.id)
      })

      const requeue = Effect.gen(function*() {
        const stale = yield* runs.queuedBefore(DateTime.subtract(yield* now, { minutes: 1 }))
        yield* Effect.forEach(stale, queue.enqueue, { discard: true })
        return stale.length
      }).pipe(Effect.withSpan("FineTunes.requeue"))

      /** Whether the model's PUSH leaderboards have a consolidated version its newest fine-tune did not learn from. */
      const hasNewData = Effect.fnUntraced(function*(model: Model) {
        const recent = yield* runs.list(model.id, { limit: 20, offset: 0 })
        const [latest] = recent
        if (latest === undefined || isActive(latest.status)) return false
        const learned = new Map((recent.find((r) => r.dataset !== null)?.dataset?.sources ?? []).map((s) => [s.leaderboard_id, s.version]))
        for (const leaderboardId of model.leaderboard_ids) {
          const [version] = yield* datasets.versions(leaderboardId as LeaderboardId)
          if (version === undefined || version.version <= (learned.get(leaderboardId) ?? 0)) continue
          // a fine-tune that failed before reading its rows already had this version: not again until a newer one
          if (latest.dataset === null && DateTime.isLessThanOrEqualTo(version.created_at, latest.created_at)) continue
          return true
        }
        return false
      })

      const runSchedules = Effect.gen(function*() {
        let started = 0
        const launched = (model: Model, trigger: FineTuneTrigger, request: StartRequest) =>
          launch(model, trigger, request).pipe(
            Effect.tap(() => Effect.sync(() => started++)),
            // one model's trouble never holds the others
            Effect.catchCause((cause) =>
              Effect.logWarning(`${trigger} fine-tune not started`, cause).pipe(Effect.annotateLogs({ model_id: model.id }))
            )
          )
        const at = yield* now
        for (const model of yield* modelRepository.dueSchedules(at)) {
          const schedule = model.fine_tune_schedule
          if (schedule === null || model.next_fine_tune_at === null) continue
          const next = nextAfter(schedule.run.type, model.next_fine_tune_at, at)
          // one instance claims each occurrence; missed ones are not made up
          if (!(yield* modelRepository.advanceSchedule(model.id, model.next_fine_tune_at, next))) continue
          yield* launched(model, "schedule", { dataset_size: schedule.dataset })
        }
        for (const model of yield* modelRepository.continuous) {
          if (!model.fine_tuned) continue
          if (yield* hasNewData(model).pipe(Effect.orElseSucceed(() => false))) yield* launched(model, "continuous", {})
        }
        return started
      }).pipe(Effect.withSpan("FineTunes.runSchedules"))

      return FineTunes.of({
        start,
        list,
        sync,
        versions,
        describe,
        prepare,
        train,
        follow,
        evaluate,
        finish,
        fail,
        requeue,
        runSchedules
      })
    })
  )
}

/** The first occurrence after `now` of a schedule last due at `due` (occurrences missed meanwhile are skipped). */
const nextAfter = (type: "DAILY" | "WEEKLY" | "MONTHLY", due: DateTime.Utc, at: DateTime.Utc): DateTime.Utc => {
  let next = nextFineTune(type, due)
  while (DateTime.isLessThanOrEqualTo(next, at)) next = nextFineTune(type, next)
  return next
}
