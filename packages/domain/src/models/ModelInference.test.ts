import { DateTime, Deferred, Effect, Fiber, Layer, Option, Result, type Scope, Stream } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import type { Labellers } from "../datasets/index.ts"
import type { CaseGenerator } from "../human/index.ts"
import {
  CallBudgets,
  type CandidateCalls,
  type ChatRequest,
  ChatProvider,
  ChatProviderFailed,
  type ChatTarget,
  ChatTargets,
  type StreamOptions,
  type Inference,
  NoActiveDeployment,
  ServiceModels,
  type Trace,
  TraceWriter
} from "../inference/index.ts"
import { LeaderboardId, type Leaderboards, ModelDirectory } from "../leaderboards/index.ts"
import { LeaderboardRepositoryMemory } from "../leaderboards/memory.ts"
import type { RunSteps } from "../runs/index.ts"
import { ModelVersionId, NotFound, WorkspaceId } from "../shared/index.ts"
import { IdGeneratorInOrder, uuid, workspaceOwner } from "../testing/index.ts"
import { defaultDeployment } from "./Deployment.ts"
import { ModelServing, type ServedVersion, type ServingModel } from "./ModelServing.ts"
import { FineTuningApi } from "./FineTuningApi.ts"
import type { InferenceLog } from "./InferenceLog.ts"
import { InferenceLogReader } from "./InferenceLogReader.ts"
import { InferenceLogWriter } from "./InferenceLogWriter.ts"
import { InferenceLogsMemory } from "./InferenceLogMemory.ts"
import { ModelId, newModel } from "./Model.ts"
import { NoSuccessfulFineTune } from "./ModelErrors.ts"
import { ModelDirectoryModels } from "./ModelDirectoryModels.ts"
import { ModelInference } from "./ModelInference.ts"
import { ServiceModelsDeployed } from "./ServiceModelsDeployed.ts"
import { activeVersion, exchangeOf, inferenceLogOf, unservable, type VersionCall } from "./VersionCaller.ts"
import { ModelRepository } from "./ModelRepository.ts"
import { FineTuneRepositoryMemory, ModelRepositoryMemory } from "./ModelRepositoryMemory.ts"

const workspace = WorkspaceId.make(uuid(1))
const elsewhere = WorkspaceId.make(uuid(2))
const at = DateTime.makeUnsafe(0)

// the models and versions the tests name
const m1 = ModelId.make(uuid(101))
const mFew = ModelId.make(uuid(102))
const mIdle = ModelId.make(uuid(103))
const mOne = ModelId.make(uuid(104))
const mOther = ModelId.make(uuid(105))
const mUntuned = ModelId.make(uuid(106))
const vFew = ModelVersionId.make(uuid(111))
const vNew = ModelVersionId.make(uuid(112))
const vOld = ModelVersionId.make(uuid(113))
const vOne = ModelVersionId.make(uuid(114))
const vStopped = ModelVersionId.make(uuid(115))

const version = (id: ModelVersionId, overrides: Partial<ServedVersion> = {}): ServedVersion => ({
  id,
  trainer: "openai",
  artifact: { kind: "openai", model: `ft:base:acme:${id}` },
  deployment_status: "active",
  deployment: { ...defaultDeployment, default_max_new_tokens: 64 },
  deployed_at: at,
  ...overrides
})

const fewShot = version(vFew, {
  trainer: "few_shot",
  artifact: {
    kind: "few_shot",
    base_model: "acme/small",
    demonstrations: [{ messages: [{ role: "user", content: "q1" }, { role: "assistant", content: "a1" }] }]
  },
  deployment: null
})

const servingModel = (overrides: Partial<ServingModel> = {}): ServingModel => ({
  id: m1,
  workspace_id: workspace,
  name: "support model",
  leaderboard_ids: [LeaderboardId.make(uuid(120))],
  fine_tuned: true,
  active: [version(vNew), version(vOld)],
  webhook_enabled: false,
  ...overrides
})

const ask = (content: string): ChatRequest => ({ messages: [{ role: "user", content }] })

describe("activeVersion", () => {
  it("is the most recently deployed active version, or the active one named", () => {
    const model = servingModel()
    expect(activeVersion(model, null)?.id).toBe(vNew)
    expect(activeVersion(model, vOld)?.id).toBe(vOld)
    expect(activeVersion(model, vStopped)).toBeUndefined()
    expect(activeVersion(servingModel({ active: [] }), null)).toBeUndefined()
  })
})

describe("exchangeOf", () => {
  const identity = { shape: <A>(m: A) => m, deployment: { ...defaultDeployment, default_max_new_tokens: 64 } }

  it("sends the caller's messages as shaped, with the deployment's max_tokens unless the caller sets one", () => {
    const plain = exchangeOf(identity, { ...ask("q7"), temperature: 0.2 })
    expect(plain).toEqual({
      messages: [{ role: "user", content: "q7" }],
      sent: [{ role: "user", content: "q7" }],
      maxTokens: 64,
      parameters: { temperature: 0.2, max_tokens: 64 }
    })
    expect(exchangeOf(identity, { ...ask("q7"), max_tokens: 5 })).toMatchObject({ maxTokens: 5, parameters: { max_tokens: 5 } })
    expect(exchangeOf(identity, { ...ask("q7"), response_format: { type: "json_object" } }).parameters)
      .toEqual({ response_format: { type: "json_object" }, max_tokens: 64 })
    const shaped = exchangeOf({ ...identity, shape: (m) => [{ role: "user", content: "demo" }, ...m] }, ask("q7"))
    expect(shaped.sent).toHaveLength(2)
    expect(shaped.messages).toHaveLength(1)
  })

  it("sends the serving path's parameters as given, the output capped under the name the caller used", () => {
    const tools = [{ type: "function", function: { name: "lookup" } }]
    const given = { tools, tool_choice: "auto", seed: 3, temperature: 0.5 }
    expect(exchangeOf(identity, { ...ask("q7"), parameters: given })).toMatchObject({ maxTokens: 64, parameters: { ...given, max_tokens: 64 } })
    const newer = exchangeOf(identity, { ...ask("q7"), parameters: { ...given, max_completion_tokens: 9 } })
    expect(newer).toMatchObject({ maxTokens: 9 })
    expect(newer.parameters).toEqual({ ...given, max_completion_tokens: 9 })
    const both = exchangeOf(identity, { ...ask("q7"), parameters: { max_completion_tokens: 9, max_tokens: 20 } })
    expect(both).toMatchObject({ maxTokens: 9, parameters: { max_completion_tokens: 9, max_tokens: 9 } })
    // a judge's own fields win over the same parameters
    expect(exchangeOf(identity, { ...ask("q7"), temperature: 0, parameters: { temperature: 1 } }).parameters.temperature).toBe(0)
  })
})

describe("inferenceLogOf", () => {
  const chosen = { model: servingModel(), version: version(vNew), secret: `ft:base:acme:${vNew}` }
  const exchange = exchangeOf({ shape: (m) => [{ role: "user", content: "demo" }, { role: "assistant", content: "a" }, ...m], deployment: defaultDeployment }, ask("q7"))

  it("records the exchange without where the version lives", () => {
    const called: VersionCall = {
      timestamp: at,
      result: Result.succeed({ body: `{"model":"ft:base:acme:${vNew}"}`, output: "a7", usage: null, costUsd: 0.001, latencyMs: 12 })
    }
    const log = inferenceLogOf(chosen, exchange, called, { message_id: "msg-1", trace_id: null }, at)
    expect(log).toMatchObject({
      id: "msg-1",
      model_id: m1,
      workspace_id: workspace,
      version_id: vNew,
      input_message: { messages: [{ role: "user", content: "q7" }] },
      output_messages: { messages: [{ role: "assistant", content: "a7" }] },
      traces: { request: { messages: "[2 demonstration turns] + messages", max_tokens: 512, temperature: null } },
      metadata: { status: "success", version_id: vNew, trainer: "openai", latency_ms: 12, cost_usd: 0.001, trace_id: null }
    })
    expect(JSON.stringify(log.traces)).not.toContain("ft:base")
  })

  it("records a failure with its status and the reason redacted", () => {
    const failed = new ChatProviderFailed({
      candidate_id: "x",
      candidate_name: "x",
      reason: `ft:base:acme:${vNew} answered 500`,
      upstream_status: 500,
      latency_ms: 9
    })
    const log = inferenceLogOf(chosen, exchange, { timestamp: at, result: Result.fail(failed) }, { message_id: "msg-2", trace_id: "t-2" }, at)
    expect(log.traces["response"]).toEqual({ status: 500, error: "[version] answered 500" })
    expect(log.output_messages).toEqual({ messages: [] })
    expect(log.metadata).toMatchObject({ status: "error", latency_ms: 9, usage: null, cost_usd: null, trace_id: "t-2" })
  })
})

describe("unservable", () => {
  it("fails as a candidate that could not answer: 404 for another workspace's model, 409 without a deployment", () => {
    const model = { id: m1, name: "support model" }
    const missing = unservable(model, new NotFound({ resource: "model", id: m1 }))
    expect(missing).toMatchObject({ candidate_id: m1, candidate_name: "support model", upstream_status: 404, latency_ms: 0 })
    const untuned = unservable(model, new NoSuccessfulFineTune({ model_id: m1, message: "no" }))
    expect(untuned).toMatchObject({ upstream_status: 409, reason: "the model support model has no successful fine-tune yet" })
    const undeployed = unservable(model, new NoActiveDeployment({ model_id: m1 }))
    expect(undeployed).toMatchObject({ upstream_status: 409, reason: "the model support model has no active deployment" })
  })
})

// ServiceModelsDeployed over small fakes of the ports it calls: a fixed serving copy, a chat provider
// that records what it is sent, the memory inference logs. No trace writer and no budgets are
// provided: the layer needs neither. (ModelInference's are doubles that keep what they are given.)
// Streamed, the provider sends one event per word of "streamed answer" then a usage event; asked
// "breaks" it fails after the first, asked "stalls" it waits for ever after it.
describe("ServiceModelsDeployed", () => {
  const target = (name: string): ChatTarget => ({
    candidateId: name,
    candidateName: name,
    platform: "Router",
    modelName: name,
    url: null,
    authType: "bearer",
    authHeaderName: null,
    token: Option.none(),
    inputPricePerMTokens: null,
    outputPricePerMTokens: null
  })

  const models = new Map<string, ServingModel>([
    [m1, servingModel()],
    [mFew, servingModel({ id: mFew, active: [fewShot], webhook_enabled: true })],
    [mUntuned, servingModel({ id: mUntuned, fine_tuned: false, active: [] })],
    [mIdle, servingModel({ id: mIdle, active: [] })],
    [mOther, servingModel({ id: mOther, workspace_id: elsewhere })]
  ])

  const setup = () => {
    const sent: Array<{ readonly target: ChatTarget; readonly request: ChatRequest; readonly options?: StreamOptions }> = []
    const inFlight = { now: 0, most: 0 }
    const recorded: Array<InferenceLog> = []
    const traces: Array<Trace> = []
    const settled: Array<number | null> = []
    const events: Array<Uint8Array> = []
    const failure = (to: ChatTarget, reason: string, upstream_status: number | null) =>
      new ChatProviderFailed({ candidate_id: to.candidateId, candidate_name: to.candidateName, reason, upstream_status, latency_ms: 3 })
    const ports = Layer.mergeAll(
      Layer.succeed(ModelServing, {
        snapshot: (id) => Effect.succeed(Option.fromUndefinedOr(models.get(id))),
        version: () => Effect.succeedNone
      }),
      Layer.succeed(ChatProvider, {
        complete: (to, request) =>
          Effect.gen(function*() {
            sent.push({ target: to, request })
            const question = request.messages.at(-1)?.content ?? ""
            if (question === "boom") {
              return yield* new ChatProviderFailed({
                candidate_id: to.candidateId,
                candidate_name: to.candidateName,
                reason: `${to.modelName} answered 500`,
                upstream_status: 500,
                latency_ms: 3
              })
            }
            inFlight.most = Math.max(inFlight.most, ++inFlight.now)
            if (question === "slow") yield* Effect.sleep("20 millis")
            inFlight.now--
            return { body: "{}", output: `${to.modelName}: ${question}`, usage: null, costUsd: 0.01, latencyMs: 4 }
          }),
        stream: (to, request, options) =>
          Effect.gen(function*() {
            sent.push({ target: to, request, options })
            const question = request.messages.at(-1)?.content
            if (question === "boom") return yield* failure(to, `${to.modelName} answered 500`, 500)
            let output: string | null = null
            let ended = false
            const words = question === "breaks" || question === "stalls" ? ["streamed "] : ["streamed ", "answer"]
            const deltas = Stream.fromIterable(words).pipe(Stream.rechunk(1), Stream.map((word) => {
              const event = new TextEncoder().encode(`data: {"choices":[{"delta":{"content":"${word}"}}]}\n\n`)
              events.push(event)
              output = (output ?? "") + word
              return event
            }))
            const rest = question === "breaks"
              ? Stream.fail(failure(to, `${to.modelName} reset the connection`, null))
              : question === "stalls"
              ? Stream.never
              : Stream.fromEffect(Effect.sync(() => {
                ended = true
                return new TextEncoder().encode("data: [DONE]\n\n")
              }))
            return {
              events: Stream.concat(deltas, rest),
              received: () => ({
                output,
                usage: ended ? { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } : null,
                costUsd: ended ? 0.02 : null,
                latencyMs: 6,
                error: null
              })
            }
          })
      }),
      Layer.succeed(FineTuningApi, {
        configured: true,
        upload: () => Effect.die("not used"),
        create: () => Effect.die("not used"),
        findByMetadata: () => Effect.die("not used"),
        job: () => Effect.die("not used"),
        events: () => Effect.die("not used"),
        cancel: () => Effect.die("not used"),
        chatTarget: target
      }),
      Layer.succeed(ChatTargets, { of: () => Effect.die("not used"), judge: (_, model) => Effect.succeed(target(model)) }),
      IdGeneratorInOrder.layer
    )
    // the memory inference logs, keeping every log recorded (the memory store keeps the first of an id)
    const recording = Layer.effect(
      InferenceLogWriter,
      Effect.map(InferenceLogWriter, (writer) =>
        InferenceLogWriter.of({ ...writer, record: (log, delivery) => Effect.andThen(Effect.sync(() => void recorded.push(log)), writer.record(log, delivery)) }))
    )
    const layer = Layer.mergeAll(ServiceModelsDeployed.layer, ModelInference.layer).pipe(
      Layer.provide(recording),
      Layer.provideMerge(InferenceLogsMemory.layer),
      Layer.provide(Layer.succeed(CallBudgets, {
        reserve: () => Effect.succeedNone,
        settle: (_, cost) => Effect.sync(() => void settled.push(cost))
      })),
      Layer.provide(Layer.succeed(TraceWriter, { record: (trace) => Effect.sync(() => void traces.push(trace)), flush: Effect.void })),
      Layer.provideMerge(ports)
    )
    /** Runs `effect` in a scope of its own (a request's), closed when it is done. */
    const run = <A, E>(effect: Effect.Effect<A, E, InferenceLogReader | ModelInference | ServiceModels | Scope.Scope>) =>
      Effect.runPromise(Effect.provide(Effect.scoped(effect), layer))
    return { sent, inFlight, recorded, traces, settled, events, run }
  }

  const complete = (modelId: string, request: ChatRequest, workspaceId = workspace) =>
    Effect.gen(function*() {
      const models = yield* ServiceModels
      return yield* Effect.result(models.complete(workspaceId, modelId, request))
    })
  const logsOf = (modelId: string) => Effect.gen(function*() {
    const reader = yield* InferenceLogReader
    return yield* reader.list(modelId, 10)
  })

  it("answers by the model's most recently deployed version and logs the call, with max_tokens from its deployment", async () => {
    const { run, sent } = setup()
    const { answer, logs } = await run(Effect.gen(function*() {
      const answer = yield* complete(m1, ask("q7"))
      const logs = yield* logsOf(m1)
      return { answer, logs }
    }))
    expect(Result.getOrThrow(answer)).toMatchObject({ version_id: vNew, output: `ft:base:acme:${vNew}: q7`, costUsd: 0.01, latencyMs: 4 })
    expect(sent).toHaveLength(1)
    expect(sent[0]!.request).toEqual({ messages: [{ role: "user", content: "q7" }], parameters: { max_tokens: 64 } })
    expect(logs).toHaveLength(1)
    expect(logs[0]).toMatchObject({ version_id: vNew, metadata: { status: "success", trace_id: null } })
    expect(logs[0]!.metadata["webhook_delivery"]).toBeUndefined()
  })

  it("puts a few_shot version's demonstrations in front, and delivers the log when the model's webhook is on", async () => {
    const { run, sent } = setup()
    const { answer, logs } = await run(Effect.gen(function*() {
      const answer = yield* complete(mFew, { ...ask("q7"), max_tokens: 9 })
      const logs = yield* logsOf(mFew)
      return { answer, logs }
    }))
    expect(Result.getOrThrow(answer).version_id).toBe(vFew)
    expect(sent[0]!.target.modelName).toBe("acme/small")
    expect(sent[0]!.request.messages.map((m) => m.content)).toEqual(["q1", "a1", "q7"])
    expect(sent[0]!.request.parameters).toEqual({ max_tokens: 9 })
    expect(logs[0]!.metadata).toMatchObject({ trainer: "few_shot", webhook_delivery: { status: "pending" } })
  })

  it("fails like a candidate that could not answer, without calling anything, when the model cannot serve", async () => {
    const { run, sent } = setup()
    const outcomes = await run(Effect.all([
      complete(mOther, ask("q7")),
      complete(m1, ask("q7"), elsewhere),
      complete("nope", ask("q7")),
      complete(mUntuned, ask("q7")),
      complete(mIdle, ask("q7"))
    ]))
    expect(outcomes.map((o) => Result.isFailure(o) ? o.failure.upstream_status : "answered")).toEqual([404, 404, 404, 409, 409])
    expect(Result.isFailure(outcomes[4]!) && outcomes[4].failure.reason).toBe("the model support model has no active deployment")
    expect(sent).toHaveLength(0)
  })

  it("passes an upstream failure on with where the version lives redacted, and logs it", async () => {
    const { run } = setup()
    const { failed, logs } = await run(Effect.gen(function*() {
      const failed = yield* complete(m1, ask("boom"))
      const logs = yield* logsOf(m1)
      return { failed, logs }
    }))
    expect(Result.isFailure(failed) && failed.failure).toMatchObject({
      candidate_id: m1,
      candidate_name: "support model",
      reason: "[version] answered 500",
      upstream_status: 500,
      latency_ms: 3
    })
    expect(logs[0]!.metadata).toMatchObject({ status: "error" })
  })

  it("shares a version's workers with model inference: max_workers holds across both", async () => {
    models.set(mOne, servingModel({ id: mOne, active: [version(vOne, { deployment: { ...defaultDeployment, max_workers: 1 } })] }))
    const { inFlight, run, sent } = setup()
    const outcomes = await run(Effect.gen(function*() {
      const inference = yield* ModelInference
      return yield* Effect.all([
        complete(mOne, ask("slow")),
        complete(mOne, ask("slow")),
        Effect.result(inference.infer(workspaceOwner(1), mOne, null, { messages: [{ role: "user", content: "slow" }] }))
      ], { concurrency: "unbounded" })
    }))
    expect(outcomes.map((o) => o._tag)).toEqual(["Success", "Success", "Success"])
    expect(sent).toHaveLength(3)
    expect(inFlight.most).toBe(1)
  })

  /** Model inference of m1, streamed, asked `content`. */
  const streamInfer = (content: string) =>
    Effect.flatMap(ModelInference, (inference) =>
      inference.infer(workspaceOwner(1), m1, null, { messages: [{ role: "user", content }], stream: true, seed: 4 }))

  it("model inference streams the version's events unchanged, as the model, and logs and traces the call once when the stream ends", async () => {
    const { events, recorded, run, sent, settled, traces } = setup()
    const { before, logs, passed, served } = await run(Effect.gen(function*() {
      const served = yield* streamInfer("q7")
      const before = recorded.length + traces.length
      const passed = yield* Stream.runCollect(served.events!)
      return { before, logs: yield* logsOf(m1), passed, served }
    }))
    expect(before).toBe(0)
    expect(served.body).toBeUndefined()
    expect(passed.slice(0, 2)).toEqual(events)
    passed.slice(0, 2).forEach((event, i) => expect(event).toBe(events[i]))
    expect(sent).toEqual([{
      target: expect.objectContaining({ modelName: `ft:base:acme:${vNew}` }),
      request: { messages: [{ role: "user", content: "q7" }], parameters: { seed: 4, max_tokens: 64 } },
      options: { includeUsage: false, answerAs: "support model" }
    }])
    expect(recorded).toHaveLength(1)
    expect(logs).toEqual([expect.objectContaining({
      id: served.message_id,
      version_id: vNew,
      output_messages: { messages: [{ role: "assistant", content: "streamed answer" }] },
      metadata: expect.objectContaining({ status: "success", cost_usd: 0.02, usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } })
    })])
    expect(traces).toEqual([expect.objectContaining({ id: served.trace_id, status: "success", output: "streamed answer", input: "q7" })])
    expect(settled).toEqual([0.02])
  })

  it("model inference logs a stream the caller left mid-way, or never read, as cancelled, once", async () => {
    const { recorded, run, settled, traces } = setup()
    await run(Effect.gen(function*() {
      const served = yield* streamInfer("stalls")
      const first = yield* Deferred.make<void>()
      const reader = yield* Effect.forkChild(Stream.runForEach(served.events!, () => Deferred.succeed(first, undefined)))
      yield* Deferred.await(first)
      yield* Fiber.interrupt(reader)
      // logged as soon as the reader is gone, not when the request's scope closes
      expect(recorded).toHaveLength(1)
      yield* Effect.scoped(streamInfer("q7"))
    }))
    expect(recorded.map((log) => [log.metadata["status"], log.output_messages])).toEqual([
      ["cancelled", { messages: [{ role: "assistant", content: "streamed " }] }],
      ["cancelled", { messages: [] }]
    ])
    expect(traces.map((t) => t.status)).toEqual(["cancelled", "cancelled"])
    expect(settled).toHaveLength(2)
  })

  it("model inference fails a stream that cannot open, or breaks mid-way, with upstream_failed redacted, logging the error once", async () => {
    const { recorded, run, settled, traces } = setup()
    const { broken, refused } = await run(Effect.gen(function*() {
      const refused = yield* Effect.flip(streamInfer("boom"))
      const served = yield* streamInfer("breaks")
      const broken = yield* Effect.flip(Stream.runDrain(served.events!))
      return { broken, refused }
    }))
    expect(refused).toMatchObject({ _tag: "UpstreamFailed", candidate_id: vNew, reason: "[version] answered 500", trace_id: traces[0]!.id })
    expect(broken).toMatchObject({ _tag: "UpstreamFailed", reason: "[version] reset the connection", trace_id: traces[1]!.id })
    expect(recorded.map((log) => [log.metadata["status"], log.traces["response"]])).toEqual([
      ["error", { status: 500, error: "[version] answered 500" }],
      ["error", { status: 200, stream: "error", error: "[version] reset the connection" }]
    ])
    expect(recorded[1]!.output_messages).toEqual({ messages: [{ role: "assistant", content: "streamed " }] })
    expect(traces.map((t) => t.status)).toEqual(["error", "error"])
    expect(settled).toEqual([null, null])
  })

  it("a Service candidate's stream is logged once, when it ends", async () => {
    const { recorded, run, sent } = setup()
    const passed = await run(Effect.gen(function*() {
      const models = yield* ServiceModels
      const stream = yield* models.stream(workspace, m1, ask("q7"), { includeUsage: true })
      expect(recorded).toHaveLength(0)
      return yield* Stream.runCollect(stream.events)
    }))
    expect(passed).toHaveLength(3)
    expect(sent[0]!.options).toEqual({ includeUsage: true, answerAs: "support model" })
    expect(recorded.map((log) => [log.metadata["status"], log.metadata["trace_id"]])).toEqual([["success", null]])
  })
})

describe("ModelDirectoryModels", () => {
  const model = (id: string, workspace_id: WorkspaceId) =>
    newModel({ id: ModelId.make(id), workspace_id, name: id, created_at: at })

  it("knows a workspace's own models that are not deleted", async () => {
    const found = await Effect.runPromise(Effect.gen(function*() {
      const repository = yield* ModelRepository
      yield* repository.insert(model(uuid(10), workspace))
      yield* repository.insert(model(uuid(11), workspace))
      yield* repository.insert(model(uuid(12), elsewhere))
      yield* repository.softDelete(ModelId.make(uuid(11)), at)
      const directory = yield* ModelDirectory
      return yield* Effect.forEach([uuid(10), uuid(11), uuid(12), uuid(13)], (id) => directory.exists(workspace, id))
    }).pipe(Effect.provide(ModelDirectoryModels.layer.pipe(
      Layer.provideMerge(ModelRepositoryMemory.layer),
      Layer.provide(Layer.mergeAll(LeaderboardRepositoryMemory.layer, FineTuneRepositoryMemory.layer))
    ))))
    expect(found).toEqual([true, false, false, false])
  })
})

// Checked by the type check: a composition that leaves either port out does not compile.
describe("ServiceModels and ModelDirectory", () => {
  it("are needed by the use cases that call them, so they cannot be left unwired", () => {
    expectTypeOf<ModelDirectory>().toExtend<Layer.Services<typeof Leaderboards.layer>>()
    expectTypeOf<ServiceModels>().toExtend<Layer.Services<typeof CandidateCalls.layer>>()
    expectTypeOf<CandidateCalls>().toExtend<Layer.Services<typeof Inference.layer>>()
    expectTypeOf<CandidateCalls>().toExtend<Layer.Services<typeof CaseGenerator.layer>>()
    expectTypeOf<ServiceModels>().toExtend<Layer.Services<typeof Labellers.layer>>()
    expectTypeOf<CandidateCalls>().toExtend<Layer.Services<typeof RunSteps.layer>>()
    const exists = Effect.gen(function*() {
      const directory = yield* ModelDirectory
      return yield* directory.exists(workspace, uuid(10))
    })
    expectTypeOf(exists).toEqualTypeOf<Effect.Effect<boolean, never, ModelDirectory>>()
  })
})
