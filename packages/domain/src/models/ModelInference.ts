import { Context, DateTime, Effect, Layer, Option, Result, Semaphore } from "effect"
import { type BudgetExceeded, boundCall, chargeOf, priceSubject, type Principal, visibleMembership } from "../access/index.ts"
import {
  CallBudgets,
  type ChatCompletion,
  type ChatRequest,
  ChatProvider,
  ChatProviderFailed,
  type ChatTarget,
  ChatTargets,
  type InferenceRequest,
  NoActiveDeployment,
  requestMessages,
  ServiceModels,
  StreamingUnsupported,
  TraceWriter,
  UpstreamFailed
} from "../inference/index.ts"
import { ModelDirectory } from "../leaderboards/index.ts"
import { type ChatMessage, hotSpan, IdGenerator, type InvalidInput, NotFound, storableText, type WorkspaceId } from "../shared/index.ts"
import { defaultDeployment, type Deployment } from "./Deployment.ts"
import { ModelServing, type ServedVersion, type ServingModel } from "./ModelServing.ts"
import { versionTarget } from "./Deployments.ts"
import { FineTuningApi } from "./FineTuningApi.ts"
import type { InferenceLog } from "./InferenceLog.ts"
import { InferenceLogWriter } from "./InferenceLogWriter.ts"
import { NoSuccessfulFineTune } from "./ModelErrors.ts"
import { ModelRepository } from "./ModelRepository.ts"

export interface ModelServed {
  /** The upstream's JSON, answered in the model's name (`answeredAs`). */
  readonly body: string
  readonly model_id: string
  readonly version_id: string
  /** The inference log's id (queued for writing). */
  readonly message_id: string
  readonly trace_id: string | null
}

/** The version a call goes to, and how it is asked. */
export interface ChosenVersion {
  readonly model: ServingModel
  readonly version: ServedVersion
  readonly deployment: Deployment
  readonly target: ChatTarget
  /** The messages the version is sent for the caller's (a `few_shot` version's demonstrations go in front). */
  readonly shape: (messages: ReadonlyArray<ChatMessage>) => ReadonlyArray<ChatMessage>
  /** Where the version lives (a tuned model's name): never written to a log or an error. */
  readonly secret: string | null
}

/** One call to a version: the caller's messages, what was sent, and the limits it went with. */
export interface VersionExchange {
  readonly messages: ReadonlyArray<ChatMessage>
  readonly sent: ReadonlyArray<ChatMessage>
  /** The caller's, else the deployment's `default_max_new_tokens`. */
  readonly maxTokens: number
  readonly temperature: number | undefined
  readonly response_format?: unknown
}

/** A call made: when, and the upstream's answer or failure. */
export interface VersionCall {
  readonly timestamp: DateTime.Utc
  readonly result: Result.Result<ChatCompletion, ChatProviderFailed>
}

const redact = (text: string, secret: string | null) =>
  secret === null || secret === "" ? text : text.split(secret).join("[version]")

/**
 * A version's answer as the model's: its `model` is the Podium model's name, not the provider's
 * (a tuned model's name is where the version lives). Anything but a JSON object is left as it came.
 */
export const answeredAs = (body: string, modelName: string): string => {
  let answer: unknown
  try {
    answer = JSON.parse(body)
  } catch {
    return body
  }
  return typeof answer === "object" && answer !== null && !Array.isArray(answer)
    ? JSON.stringify({ ...answer, model: modelName })
    : body
}

/** The model's active version a call goes to: the one named (if it is active), else the most recently deployed. */
export const activeVersion = (model: Pick<ServingModel, "active">, versionId: string | null): ServedVersion | undefined =>
  versionId === null ? model.active[0] : model.active.find((v) => v.id === versionId)

export const exchangeOf = (
  chosen: Pick<ChosenVersion, "shape" | "deployment">,
  request: {
    readonly messages: ReadonlyArray<ChatMessage>
    readonly temperature?: number | undefined
    readonly max_tokens?: number | undefined
    readonly response_format?: unknown
  }
): VersionExchange => ({
  messages: request.messages,
  sent: chosen.shape(request.messages),
  maxTokens: request.max_tokens ?? chosen.deployment.default_max_new_tokens,
  temperature: request.temperature,
  ...(request.response_format === undefined ? {} : { response_format: request.response_format })
})

/** The model's inference log of a call: the provider exchange without where the version lives or any credential. */
export const inferenceLogOf = (
  chosen: Pick<ChosenVersion, "model" | "version" | "secret">,
  exchange: VersionExchange,
  called: VersionCall,
  ids: { readonly message_id: string; readonly trace_id: string | null },
  now: DateTime.Utc
): InferenceLog => {
  const { model, secret, version } = chosen
  const { maxTokens, messages, sent } = exchange
  const { result } = called
  const output = Result.isSuccess(result) ? result.success.output : null
  return {
    id: ids.message_id,
    model_id: model.id,
    workspace_id: model.workspace_id,
    version_id: version.id,
    timestamp: called.timestamp,
    input_message: { messages },
    output_messages: { messages: output === null ? [] : [{ role: "assistant", content: output }] },
    traces: {
      request: {
        messages: sent.length === messages.length ? messages : `[${sent.length - messages.length} demonstration turns] + messages`,
        max_tokens: maxTokens,
        temperature: exchange.temperature ?? null
      },
      response: Result.isSuccess(result)
        ? { status: 200, body: redact(result.success.body, secret) }
        : { status: result.failure.upstream_status, error: redact(result.failure.reason, secret) }
    },
    metadata: {
      status: Result.isSuccess(result) ? "success" : "error",
      version_id: version.id,
      trainer: version.trainer,
      latency_ms: Result.isSuccess(result) ? result.success.latencyMs : result.failure.latency_ms,
      usage: Result.isSuccess(result) ? result.success.usage : null,
      cost_usd: Result.isSuccess(result) ? result.success.costUsd : null,
      trace_id: ids.trace_id
    },
    created_at: now
  }
}

/** Why a Service candidate's model cannot answer, as the failure of a candidate that did not (no upstream was called). */
export const unservable = (
  model: { readonly id: string; readonly name: string },
  error: NotFound | NoSuccessfulFineTune | NoActiveDeployment
): ChatProviderFailed =>
  new ChatProviderFailed({
    candidate_id: model.id,
    candidate_name: model.name,
    reason: error._tag === "NotFound"
      ? `the model ${model.id} is not a model of this workspace`
      : error._tag === "NoSuccessfulFineTune"
      ? `the model ${model.name} has no successful fine-tune yet`
      : `the model ${model.name} has no active deployment`,
    upstream_status: error._tag === "NotFound" ? 404 : 409,
    latency_ms: 0
  })

/**
 * Calls to versions, shared by model inference and Service candidates: which version answers, the
 * call within the version's workers, and its inference log. Both layers provide this same layer,
 * which a composition builds once, so a version's `max_workers` holds across both.
 */
class VersionCaller extends Context.Service<VersionCaller, {
  readonly choose: (
    model: ServingModel,
    versionId: string | null
  ) => Effect.Effect<ChosenVersion, NotFound | NoSuccessfulFineTune | NoActiveDeployment>
  readonly call: (chosen: ChosenVersion, exchange: VersionExchange) => Effect.Effect<VersionCall>
  readonly log: (
    chosen: ChosenVersion,
    exchange: VersionExchange,
    called: VersionCall,
    ids: { readonly message_id: string; readonly trace_id: string | null }
  ) => Effect.Effect<void>
}>()("@podium/domain/models/ModelInference/VersionCaller") {
  static readonly layer = Layer.effect(
    VersionCaller,
    Effect.gen(function*() {
      const serving = yield* ModelServing
      const provider = yield* ChatProvider
      const logs = yield* InferenceLogWriter
      const context = yield* Effect.context<FineTuningApi | ChatTargets>()

      /** Calls served at once per version on this instance (its deployment's `max_workers`). */
      const workers = new Map<string, { readonly size: number; readonly gate: Semaphore.Semaphore }>()
      const workersOf = (version: ServedVersion) => {
        const size = (version.deployment ?? defaultDeployment).max_workers
        let entry = workers.get(version.id)
        if (entry === undefined || entry.size !== size) workers.set(version.id, entry = { size, gate: Semaphore.makeUnsafe(size) })
        return entry.gate
      }

      const choose = Effect.fnUntraced(function*(model: ServingModel, versionId: string | null) {
        if (!model.fine_tuned) {
          return yield* new NoSuccessfulFineTune({ model_id: model.id, message: "The model has no successful fine-tune yet" })
        }
        const version = activeVersion(model, versionId)
        if (version === undefined && versionId !== null && Option.isNone(yield* serving.version(model.id, versionId))) {
          return yield* new NotFound({ resource: "model version", id: versionId })
        }
        if (version === undefined) return yield* new NoActiveDeployment({ model_id: model.id })
        const { shape, target } = yield* versionTarget(version.artifact, model.workspace_id as WorkspaceId).pipe(Effect.provide(context))
        return {
          model,
          version,
          deployment: version.deployment ?? defaultDeployment,
          target: target as ChatTarget,
          shape,
          secret: version.artifact.kind === "openai" ? version.artifact.model : null
        } satisfies ChosenVersion
      })

      const call = Effect.fnUntraced(function*(chosen: ChosenVersion, exchange: VersionExchange) {
        const timestamp = yield* DateTime.now
        const result = yield* Semaphore.withPermit(
          workersOf(chosen.version),
          Effect.result(provider.complete(chosen.target, {
            messages: exchange.sent,
            temperature: exchange.temperature,
            max_tokens: exchange.maxTokens,
            ...(exchange.response_format === undefined ? {} : { response_format: exchange.response_format })
          }))
        )
        return { timestamp, result } satisfies VersionCall
      })

      const log = Effect.fnUntraced(function*(
        chosen: ChosenVersion,
        exchange: VersionExchange,
        called: VersionCall,
        ids: { readonly message_id: string; readonly trace_id: string | null }
      ) {
        const now = yield* DateTime.now
        yield* logs.record(inferenceLogOf(chosen, exchange, called, ids, now), { deliver: chosen.model.webhook_enabled })
      })

      return VersionCaller.of({ choose, call, log })
    })
  )
}

/**
 * Inference through a model's deployed version: the most recently deployed active one, or the one
 * named (which must be active). Served from the instance's serving copy (no database round trip
 * before the upstream on a hit); each call is budgeted like leaderboard inference, traced on the
 * model's first leaderboard (source `inference`) and logged in the model's inference log (off the
 * request path), whose webhook delivery, when the model's webhook is on, is stored with it.
 */
export class ModelInference extends Context.Service<ModelInference, {
  readonly infer: (
    principal: Principal,
    modelId: string,
    versionId: string | null,
    request: InferenceRequest
  ) => Effect.Effect<
    ModelServed,
    NotFound | InvalidInput | StreamingUnsupported | NoSuccessfulFineTune | NoActiveDeployment | UpstreamFailed | BudgetExceeded
  >
}>()("@podium/domain/models/ModelInference") {
  static readonly layer = Layer.effect(
    ModelInference,
    Effect.gen(function*() {
      const serving = yield* ModelServing
      const calls = yield* VersionCaller
      const budgets = yield* CallBudgets
      const traces = yield* TraceWriter
      const ids = yield* IdGenerator

      const visible = (principal: Principal, model: ServingModel) =>
        principal._tag === "ApiTokenPrincipal"
          ? principal.token.workspace_id === model.workspace_id
          : principal._tag === "SessionPrincipal" && visibleMembership(principal, model.workspace_id as WorkspaceId) !== undefined

      const infer = Effect.fnUntraced(function*(
        principal: Principal,
        modelId: string,
        versionId: string | null,
        request: InferenceRequest
      ) {
        if (request.stream === true) return yield* new StreamingUnsupported()
        const found = yield* serving.snapshot(modelId)
        if (Option.isNone(found) || !visible(principal, found.value)) return yield* new NotFound({ resource: "model", id: modelId })
        const given = yield* Effect.fromResult(requestMessages(request))
        const chosen = yield* calls.choose(found.value, versionId)
        const { model, secret, target, version } = chosen
        const exchange = exchangeOf(chosen, { messages: given.messages, temperature: request.temperature, max_tokens: request.max_tokens })
        const { maxTokens, messages, sent } = exchange
        const prices = { input: target.inputPricePerMTokens, output: target.outputPricePerMTokens }
        const bound = boundCall(prices, sent, maxTokens, maxTokens)

        // once the upstream is called the call is paid for: finish it, and log and trace it, even if the client hangs up
        return yield* Effect.uninterruptibleMask((restore) => Effect.gen(function*() {
          const reservation = yield* restore(budgets.reserve(principal, bound, priceSubject(`model version ${version.id}`, prices)))
          const called = yield* calls.call(chosen, exchange)
          const { result, timestamp } = called
          yield* budgets.settle(reservation, result._tag === "Success" ? chargeOf(bound, result.success.costUsd) : null)
          const messageId = yield* ids.next
          const traceId = model.leaderboard_ids.length > 0 ? yield* ids.next : null
          const input = messages.findLast((m) => m.role === "user")?.content ?? null
          const output = result._tag === "Success" ? result.success.output : null
          if (traceId !== null) {
            yield* traces.record({
              id: traceId,
              workspace_id: model.workspace_id as WorkspaceId,
              leaderboard_id: model.leaderboard_ids[0]!,
              leaderboard_model_id: null,
              source: "inference",
              run_id: null,
              input: input === null ? null : storableText(input),
              messages: sent.map((m) => ({ role: storableText(m.role), content: storableText(m.content) })),
              output: output === null ? null : storableText(output),
              status: result._tag === "Success" ? "success" : "error",
              error: result._tag === "Failure" ? storableText(result.failure.reason) : null,
              latency_ms: result._tag === "Success" ? result.success.latencyMs : result.failure.latency_ms,
              usage: result._tag === "Success" && result.success.usage !== null ? { ...result.success.usage } : null,
              cost_usd: result._tag === "Success" ? result.success.costUsd : null,
              token_id: principal._tag === "ApiTokenPrincipal" ? principal.token.id : null,
              created_at: timestamp
            })
          }
          yield* calls.log(chosen, exchange, called, { message_id: messageId, trace_id: traceId })
          if (result._tag === "Failure") {
            return yield* new UpstreamFailed({
              candidate_id: version.id,
              candidate_name: model.name,
              reason: redact(result.failure.reason, secret),
              trace_id: traceId ?? messageId
            })
          }
          return { body: answeredAs(result.success.body, model.name), model_id: model.id, version_id: version.id, message_id: messageId, trace_id: traceId }
        }))
      }, hotSpan("ModelInference.infer"))

      return ModelInference.of({ infer })
    })
  ).pipe(Layer.provide(VersionCaller.layer))
}

/**
 * Service candidates answered by their model's deployed version (as model inference picks it for a
 * call naming no version), logged in the model's inference log but neither traced nor budgeted
 * here: the leaderboard's caller does both, as for any candidate. Only a model of the candidate's
 * workspace answers.
 */
export const ServiceModelsDeployed = {
  layer: Layer.effect(
    ServiceModels,
    Effect.gen(function*() {
      const serving = yield* ModelServing
      const calls = yield* VersionCaller
      const ids = yield* IdGenerator

      const complete = Effect.fnUntraced(function*(
        workspaceId: WorkspaceId,
        modelId: string,
        request: ChatRequest
      ) {
        const found = yield* serving.snapshot(modelId)
        if (Option.isNone(found) || found.value.workspace_id !== workspaceId) {
          return yield* unservable({ id: modelId, name: modelId }, new NotFound({ resource: "model", id: modelId }))
        }
        const model = found.value
        const chosen = yield* calls.choose(model, null).pipe(Effect.mapError((e) => unservable(model, e)))
        const exchange = exchangeOf(chosen, request)
        // once the version is called the call is paid for: finish and log it even if the caller gives up
        return yield* Effect.uninterruptible(Effect.gen(function*() {
          const called = yield* calls.call(chosen, exchange)
          yield* calls.log(chosen, exchange, called, { message_id: yield* ids.next, trace_id: null })
          const { result } = called
          if (Result.isFailure(result)) {
            return yield* new ChatProviderFailed({
              candidate_id: model.id,
              candidate_name: model.name,
              reason: redact(result.failure.reason, chosen.secret),
              upstream_status: result.failure.upstream_status,
              latency_ms: result.failure.latency_ms
            })
          }
          return { ...result.success, body: answeredAs(result.success.body, model.name), version_id: chosen.version.id }
        }))
      }, hotSpan("ServiceModels.complete"))

      return ServiceModels.of({ complete })
    })
  ).pipe(Layer.provide(VersionCaller.layer))
}

/** The leaderboards' view of models: a model exists for a workspace when it is one of its own and not deleted. */
export const ModelDirectoryModels = {
  layer: Layer.effect(
    ModelDirectory,
    Effect.gen(function*() {
      const models = yield* ModelRepository
      return ModelDirectory.of({
        exists: (workspaceId, modelId) =>
          Effect.map(models.find(modelId), Option.exists((m) => m.workspace_id === workspaceId))
      })
    })
  )
}
